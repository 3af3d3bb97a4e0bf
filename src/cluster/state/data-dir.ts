/**
 * One data directory, one running cluster. The owner file records who holds the directory;
 * taking it is atomic (a hard link fails if the file exists), a holder that died is recognised
 * by its pid and replaced, and a live holder makes a second instance refuse before it touches
 * anything (state, kubeconfig, ports).
 */
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const STATE_FILE = 'state.db';
const OWNER_FILE = 'owner.json';

export interface OwnerInfo {
  pid: number;
  /** The kubeconfig the owner writes (where to reach it). */
  kubeconfig?: string;
  /** The API server URL once it serves. */
  url?: string;
  command: string;
  startedAt: string;
}

export class DataDirInUseError extends Error {
  readonly owner: OwnerInfo;
  constructor(dir: string, owner: OwnerInfo) {
    const reach = owner.kubeconfig ? `; its kubeconfig is ${owner.kubeconfig}` : '';
    const at = owner.url ? ` serving ${owner.url}` : '';
    super(
      `the data directory ${dir} is in use by troupe process ${owner.pid} (${owner.command})${at}, ` +
        `started ${owner.startedAt}${reach}. Nothing was changed. Stop that process first, ` +
        'or start this one with another --data-dir.',
    );
    this.owner = owner;
  }
}

export interface DataDirClaim {
  readonly dir: string;
  readonly stateFile: string;
  /** Records where the owner serves, for the message a second instance prints. */
  update(info: Partial<Pick<OwnerInfo, 'url' | 'kubeconfig'>>): void;
  release(): void;
}

/** Takes the directory for this process, or throws DataDirInUseError naming its owner. */
export function claimDataDir(dirPath: string, info: { kubeconfig?: string } = {}): DataDirClaim {
  const dir = resolve(dirPath);
  // The state holds the admin token and the serving key: readable by its owner only.
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ownerFile = join(dir, OWNER_FILE);
  let owner: OwnerInfo = {
    pid: process.pid,
    kubeconfig: info.kubeconfig ? resolve(info.kubeconfig) : undefined,
    command: process.argv.slice(1).join(' ') || process.argv0,
    startedAt: new Date().toISOString(),
  };
  const write = (target: string) =>
    writeFileSync(target, `${JSON.stringify(owner, null, 2)}\n`, { mode: 0o600 });
  const tmp = join(dir, `.${OWNER_FILE}.${process.pid}`);
  write(tmp);
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        linkSync(tmp, ownerFile);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 5) throw err;
      }
      const current = readOwner(ownerFile);
      if (current && alive(current.pid)) throw new DataDirInUseError(dir, current);
      // The holder died without releasing: set its file aside (only one racer wins the rename).
      try {
        renameSync(ownerFile, `${ownerFile}.stale`);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
    }
  } finally {
    rmSync(tmp, { force: true });
  }
  rmSync(`${ownerFile}.stale`, { force: true });
  let released = false;
  return {
    dir,
    stateFile: join(dir, STATE_FILE),
    update(more) {
      if (released) return;
      owner = { ...owner, ...more };
      write(tmp);
      renameSync(tmp, ownerFile);
    },
    release() {
      if (released) return;
      released = true;
      const current = readOwner(ownerFile);
      if (current?.pid === process.pid) unlinkSync(ownerFile);
    },
  };
}

/** Deletes the stored cluster (the database and its WAL), leaving the directory and owner. */
export function resetState(claim: DataDirClaim): void {
  for (const suffix of ['', '-wal', '-shm', '-journal'])
    rmSync(`${claim.stateFile}${suffix}`, { force: true });
}

function readOwner(file: string): OwnerInfo | undefined {
  try {
    const o = JSON.parse(readFileSync(file, 'utf8')) as OwnerInfo;
    return typeof o.pid === 'number' ? o : undefined;
  } catch {
    // Unreadable or half-written by a crashed holder: nobody we could name holds it.
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
