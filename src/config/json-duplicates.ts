/**
 * JSON.parse keeps the last of two equal keys silently; a group plan with a node written
 * twice must be refused instead. This scans the text once and reports every object key that
 * appears twice in the same object, with its JSON path. It assumes the text already parsed
 * (call it after JSON.parse succeeded).
 */
export interface DuplicateKey {
  path: (string | number)[];
  key: string;
}

export function findDuplicateKeys(text: string): DuplicateKey[] {
  const found: DuplicateKey[] = [];
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i++;
  };
  const str = (): string => {
    const start = i;
    i++; // opening quote
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i++;
    // the slice is a JSON string literal the scan above delimited, in a text JSON.parse already accepted
    const key: unknown = JSON.parse(text.slice(start, i));
    return typeof key === 'string' ? key : String(key);
  };
  const value = (path: (string | number)[]): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      const seen = new Set<string>();
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        const key = str();
        if (seen.has(key)) found.push({ path, key });
        seen.add(key);
        ws();
        i++; // ':'
        value([...path, key]);
        ws();
        if (text[i++] === '}') return;
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (let n = 0; ; n++) {
        value([...path, n]);
        ws();
        if (text[i++] === ']') return;
      }
    } else if (c === '"') {
      str();
    } else {
      while (i < text.length && !',}] \t\n\r'.includes(text[i]!)) i++;
    }
  };
  value([]);
  return found;
}
