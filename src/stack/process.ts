import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { StackError } from '../errors';

/** Polls `probe` until it returns true or the deadline passes. */
export async function waitFor(probe: () => Promise<boolean>, deadlineMs: number, intervalMs = 200): Promise<boolean> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (await probe().catch(() => false)) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** True when something accepts TCP connections on host:port. */
export function portOpen(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (open: boolean) => {
      socket.destroy();
      resolve(open);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command to completion; throws StackError with its output on failure. */
export function run(cmd: string, args: string[], what: string, opts: { cwd?: string; missingHint?: string } = {}): string {
  const res = spawnSync(cmd, args, { cwd: opts.cwd, encoding: 'utf8', maxBuffer: 32 * 1024 * 1024 });
  if (res.error && (res.error as NodeJS.ErrnoException).code === 'ENOENT') {
    throw new StackError(`${cmd} is not installed; ${opts.missingHint ?? `install it to ${what}`}`, { cmd });
  }
  if (res.status !== 0) {
    const out = `${res.stdout ?? ''}${res.stderr ?? ''}`.trim().split('\n').slice(-20).join('\n');
    throw new StackError(`${what} failed (${cmd} exited ${res.status}):\n${out}`, { cmd, args });
  }
  return `${res.stdout ?? ''}${res.stderr ?? ''}`;
}

export function isLocalHost(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost' || host === '::1';
}
