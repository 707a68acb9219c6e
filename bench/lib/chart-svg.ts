/**
 * One SVG with two panels, written by hand (no chart library): the scale-out curve (apply
 * time against the number of changed nodes, median with min-max whiskers) and the rollback
 * times of deploy and Helm (median bars with min-max whiskers).
 */
import type { Spread } from './stats.ts';

const W = 880;
const H = 360;
const PAD = { l: 60, r: 20, t: 40, b: 50 };
const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

function niceMax(v: number): number {
  if (!Number.isFinite(v) || v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return [1, 2, 2.5, 5, 10].map((m) => m * p).find((m) => m >= v) ?? v;
}

function yAxis(x0: number, y0: number, w: number, h: number, max: number, label: string): string {
  const out: string[] = [];
  for (let i = 0; i <= 4; i++) {
    const v = (max * i) / 4;
    const y = y0 + h - (h * i) / 4;
    out.push(`<line x1="${x0}" y1="${y}" x2="${x0 + 5}" y2="${y}" stroke="#999"/><text x="${x0 - 6}" y="${y + 4}" text-anchor="end" font-size="11">${+v.toFixed(1)}</text>`);
    out.push(`<line x1="${x0}" y1="${y}" x2="${x0 + w}" y2="${y}" stroke="#eee"/>`);
  }
  out.push(`<text x="${x0 - 42}" y="${y0 + h / 2}" font-size="12" transform="rotate(-90 ${x0 - 42} ${y0 + h / 2})" text-anchor="middle">${esc(label)}</text>`);
  return out.join('\n');
}

export interface ChartInput {
  scale: { size: number; ms: Spread }[];
  rollback: { name: string; ms: Spread }[];
  title: string;
}

export function renderChart(input: ChartInput): string {
  const pw = (W - 3 * PAD.l) / 2;
  const ph = H - PAD.t - PAD.b;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`);
  parts.push(`<rect width="${W}" height="${H}" fill="white"/>`);
  parts.push(`<text x="${W / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${esc(input.title)}</text>`);

  // left: scale-out curve
  {
    const x0 = PAD.l;
    const y0 = PAD.t;
    const maxN = Math.max(...input.scale.map((s) => s.size), 1);
    const maxY = niceMax(Math.max(...input.scale.map((s) => s.ms.max / 1000), 0));
    const x = (n: number) => x0 + (pw * n) / maxN;
    const y = (s: number) => y0 + ph - (ph * s) / maxY;
    parts.push('<g>');
    parts.push(yAxis(x0, y0, pw, ph, maxY, 'deploy apply (s)'));
    parts.push(`<line x1="${x0}" y1="${y0 + ph}" x2="${x0 + pw}" y2="${y0 + ph}" stroke="#333"/><line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + ph}" stroke="#333"/>`);
    for (const s of input.scale) {
      parts.push(`<text x="${x(s.size)}" y="${y0 + ph + 16}" text-anchor="middle" font-size="11">${s.size}</text>`);
      parts.push(`<line x1="${x(s.size)}" y1="${y(s.ms.min / 1000)}" x2="${x(s.size)}" y2="${y(s.ms.max / 1000)}" stroke="#1f77b4" stroke-width="2"/>`);
      parts.push(`<circle cx="${x(s.size)}" cy="${y(s.ms.median / 1000)}" r="4" fill="#1f77b4"><title>${s.size} nodes: median ${(s.ms.median / 1000).toFixed(1)} s</title></circle>`);
    }
    parts.push(`<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="${input.scale.map((s) => `${x(s.size)},${y(s.ms.median / 1000)}`).join(' ')}"/>`);
    parts.push(`<text x="${x0 + pw / 2}" y="${y0 + ph + 36}" text-anchor="middle" font-size="12">changed nodes in one apply (P2 scale-out)</text></g>`);
  }

  // right: rollback bars
  {
    const x0 = 2 * PAD.l + pw;
    const y0 = PAD.t;
    const maxY = niceMax(Math.max(...input.rollback.map((r) => r.ms.max / 1000), 0));
    const y = (s: number) => y0 + ph - (ph * s) / maxY;
    const bw = pw / (input.rollback.length * 2);
    parts.push(yAxis(x0, y0, pw, ph, maxY, 'degraded -> previous image ready (s)'));
    parts.push(`<line x1="${x0}" y1="${y0 + ph}" x2="${x0 + pw}" y2="${y0 + ph}" stroke="#333"/><line x1="${x0}" y1="${y0}" x2="${x0}" y2="${y0 + ph}" stroke="#333"/>`);
    input.rollback.forEach((r, i) => {
      const cx = x0 + bw * (2 * i + 1);
      const color = i === 0 ? '#2ca02c' : '#d62728';
      parts.push(`<rect x="${cx - bw / 2}" y="${y(r.ms.median / 1000)}" width="${bw}" height="${y0 + ph - y(r.ms.median / 1000)}" fill="${color}" opacity="0.8"><title>${esc(r.name)}: median ${(r.ms.median / 1000).toFixed(1)} s</title></rect>`);
      parts.push(`<line x1="${cx}" y1="${y(r.ms.min / 1000)}" x2="${cx}" y2="${y(r.ms.max / 1000)}" stroke="#333" stroke-width="2"/>`);
      parts.push(`<text x="${cx}" y="${y(r.ms.median / 1000) - 6}" text-anchor="middle" font-size="11">${(r.ms.median / 1000).toFixed(1)} s</text>`);
      parts.push(`<text x="${cx}" y="${y0 + ph + 16}" text-anchor="middle" font-size="11">${esc(r.name)}</text>`);
    });
    parts.push(`<text x="${x0 + pw / 2}" y="${y0 + ph + 36}" text-anchor="middle" font-size="12">time to roll back (P3)</text>`);
  }
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
