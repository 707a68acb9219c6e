/**
 * `npm test`'s second reporter (the default one stays on the console): vitest's JSON report,
 * written outside the repository to <state>/test-reports/<start time>.json (src/paths.ts:
 * DEPLOY_STATE_DIR, else ~/.local/state/k8s-deployer), plus a `profile` of the run that the
 * JSON report lacks: each file's project, when it started and ended (wall clock), and its
 * phases as vitest measured them (environment, prepare, import, setup files, tests and hooks).
 * `npm run test:profile` (bench/test-profile.ts) prints it per project and per file.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { JsonReporter, type TestModule } from 'vitest/node';
import { reportStem } from './report-name.ts';

/** One test file's run, in milliseconds. */
export interface ProfiledModule {
  readonly file: string;
  readonly project: string;
  /**
   * Wall clock (ms since the epoch) as this reporter saw it: when vitest queued the file (just
   * before it imports it), when its tests started (after the import), and when it ended.
   */
  readonly queuedAt: number;
  readonly startedAt: number;
  readonly endedAt: number;
  readonly environmentSetupMs: number;
  readonly prepareMs: number;
  /** Importing the test file (its imports, the suite callbacks). */
  readonly collectMs: number;
  /** Importing the project's setup files. */
  readonly setupMs: number;
  /** Its tests and hooks (beforeAll and afterAll included). */
  readonly testsMs: number;
  readonly state: string;
}

/** The `profile` key this reporter adds to vitest's JSON report. */
export interface RunProfile {
  /** Wall clock at the reporter's start (before the global setups) and at the end of the run. */
  readonly startedAt: number;
  readonly endedAt: number;
  readonly modules: readonly ProfiledModule[];
}

/**
 * Where a report of a run started at `at` goes: DEPLOY_TEST_REPORT_FILE when set (test/run.ts
 * names each lane's report), else <state>/test-reports/<start time>.json.
 */
export function reportFile(at: Date, env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env.DEPLOY_TEST_REPORT_FILE || `${reportStem(at, env)}.json`;
}

export default class ProfileReporter extends JsonReporter {
  private readonly startedAt = Date.now();
  private readonly queued = new Map<string, number>();
  private readonly started = new Map<string, number>();
  private readonly modules: ProfiledModule[] = [];
  private readonly file: string;

  constructor(options: { outputFile?: string } = {}) {
    const file = options.outputFile ?? reportFile(new Date());
    super({ ...options, outputFile: file });
    this.file = file;
  }

  onTestModuleQueued(module: TestModule): void {
    this.queued.set(module.moduleId, Date.now());
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId, Date.now());
  }

  onTestModuleEnd(module: TestModule): void {
    const d = module.diagnostic();
    const endedAt = Date.now();
    const startedAt = this.started.get(module.moduleId) ?? endedAt - d.duration;
    this.modules.push({
      file: module.relativeModuleId,
      project: module.project.name,
      queuedAt: this.queued.get(module.moduleId) ?? startedAt - d.collectDuration - d.setupDuration,
      startedAt,
      endedAt,
      environmentSetupMs: d.environmentSetupDuration,
      prepareMs: d.prepareDuration,
      collectMs: d.collectDuration,
      setupMs: d.setupDuration,
      testsMs: d.duration,
      state: module.state(),
    });
  }

  override async onTestRunEnd(testModules: ReadonlyArray<TestModule>): Promise<void> {
    await super.onTestRunEnd(testModules);
    const report = JSON.parse(await readFile(this.file, 'utf8')) as Record<string, unknown>;
    const profile: RunProfile = { startedAt: this.startedAt, endedAt: Date.now(), modules: this.modules };
    await writeFile(this.file, JSON.stringify({ ...report, profile }));
  }
}
