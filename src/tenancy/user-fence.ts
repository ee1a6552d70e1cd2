import { randomUUID } from 'node:crypto';
import { UserBeingErasedError, errorMessage } from '../errors';
import type { RedisClient } from '../infra/redis';

/** What `enter` grants: the user's erasure epoch (it changes with every erasure) and the way out. */
export interface FencePass {
  /** Per user, the number of erasures finished so far: a cache keyed by it forgets what an erasure removed. */
  epochs: number[];
  release(): Promise<void>;
}

/**
 * The per-user erasure fence. Semantics: a write for a user enters the fence first and
 * leaves it when it has answered; an erasure closes the fence, waits until every write
 * already inside has left (at most `drainMs`; a writer that died is forgotten after its
 * lease), sweeps, and opens the fence again when it has answered. So a write either
 * finished before the sweep began (and is erased), or is refused with 409
 * USER_BEING_ERASED while the erasure runs, or comes after the erasure answered (and
 * stays). Shared through Redis by every process; while Redis is down, each process keeps
 * its own fence (correct for one instance; the erasure's second sweep covers the rest).
 */
export class UserWriteFence {
  private readonly local = new Map<string, { closers: number; inside: Set<string>; epoch: number; openedAt: number }>();

  constructor(
    private readonly redis: RedisClient,
    private readonly opts: { leaseMs?: number; drainMs?: number; closeMs?: number } = {},
  ) {}

  /**
   * Enters the fence for every user (all or none); throws UserBeingErasedError when one is
   * being erased, or when an erasure of one ended after `arrivedAt` (ms, when the request
   * reached the server): a write that arrived while the erasure ran is refused, not let in
   * once the fence opens. Clocks of API processes are taken to agree within a millisecond or so.
   */
  async enter(userIds: readonly string[], arrivedAt = Date.now()): Promise<FencePass> {
    const users = [...new Set(userIds)];
    if (users.length === 0) return { epochs: [], release: async () => undefined };
    const ticket = randomUUID();
    if (!this.shared()) return this.enterLocal(users, ticket, arrivedAt);
    const deadline = Date.now() + (this.opts.leaseMs ?? 5 * 60_000);
    let result: number[] | number;
    try {
      result = (await this.redis.eval(ENTER, users.length * 4, ...users.flatMap(keysOf), ticket, String(deadline), String(arrivedAt))) as number[] | number;
    } catch (err) {
      // Redis went away between the status check and the command: the process's own fence, as
      // when it was down already (was a 500 during a Redis shutdown).
      if (this.shared() && !REDIS_CONNECTION_LOST.test(errorMessage(err))) throw err;
      return this.enterLocal(users, ticket, arrivedAt);
    }
    if (typeof result === 'number') throw new UserBeingErasedError(users[result - 1]!);
    return {
      epochs: result,
      release: async () => {
        await Promise.all(users.map((u) => this.redis.zrem(keysOf(u)[1], ticket))).catch(() => undefined);
      },
    };
  }

  /**
   * Closes the fence of a user, waits for the writes inside to leave, runs `work`, then
   * opens the fence with a new epoch. Writes arriving meanwhile get UserBeingErasedError.
   * With `openAfter` (the erasure's answer going out), the fence opens only once that has
   * settled, at most OPEN_AFTER_MS later: a write refused until then was never acknowledged
   * before the erasure answered, so none acknowledged before that answer survives it.
   */
  async closed<T>(userId: string, work: () => Promise<T>, opts: { openAfter?: Promise<unknown> } = {}): Promise<T> {
    const [closers, inside, epoch, opened] = keysOf(userId);
    const shared = this.shared();
    if (shared)
      await this.redis
        .multi()
        .incr(closers)
        .pexpire(closers, this.opts.closeMs ?? 10 * 60_000)
        .exec();
    else this.localOf(userId).closers++;
    // The epoch stays (it is how every process's registration cache learns of the erasure: part
    // of the erasure's record, like user_erasures); the closer count goes once no erasure holds it.
    const open = async () => {
      if (shared) await this.redis.eval(OPEN, 3, epoch, closers, opened, String(Date.now()), String(OPENED_TTL_MS));
      else {
        const l = this.localOf(userId);
        l.epoch++;
        l.closers--;
        l.openedAt = Date.now();
      }
    };
    let result: T;
    try {
      await this.drain(userId, shared, inside);
      result = await work();
    } catch (err) {
      await open();
      throw err;
    }
    if (!opts.openAfter) await open();
    else {
      // Opened in the background: the caller answers meanwhile (the fence's closer count expires on its own if this fails).
      const bound = new Promise((r) => setTimeout(r, OPEN_AFTER_MS).unref());
      void Promise.race([opts.openAfter.catch(() => undefined), bound])
        .then(open)
        .catch(() => undefined);
    }
    return result;
  }

  private async drain(userId: string, shared: boolean, inside: string): Promise<void> {
    const until = Date.now() + (this.opts.drainMs ?? 30_000);
    if (shared) await this.redis.zremrangebyscore(inside, '-inf', String(Date.now()));
    while (Date.now() < until) {
      const busy = shared ? await this.redis.zcount(inside, String(Date.now()), '+inf') : this.localOf(userId).inside.size;
      if (busy === 0) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  private enterLocal(users: string[], ticket: string, arrivedAt: number): FencePass {
    const states = users.map((u) => this.localOf(u));
    const fenced = states.findIndex((s) => s.closers > 0 || s.openedAt >= arrivedAt);
    if (fenced >= 0) throw new UserBeingErasedError(users[fenced]!);
    for (const s of states) s.inside.add(ticket);
    return {
      epochs: states.map((s) => -1 - s.epoch),
      release: async () => {
        for (const s of states) s.inside.delete(ticket);
      },
    };
  }

  private localOf(userId: string) {
    let l = this.local.get(userId);
    if (!l) this.local.set(userId, (l = { closers: 0, inside: new Set(), epoch: 0, openedAt: -1 }));
    return l;
  }

  private shared(): boolean {
    return this.redis.status === 'ready';
  }
}

/** How long an erasure's answer may take to go out before the fence opens anyway. */
const OPEN_AFTER_MS = 5_000;
/** How long the moment a fence opened is kept: longer than any request waits to reach the fence. */
const OPENED_TTL_MS = 10 * 60_000;

// KEYS: epoch, closers, opened; ARGV: now (ms), opened's TTL -> nothing: a new epoch, one closer
// fewer (the count deleted at zero), and when it opened
const OPEN = `redis.call('INCR', KEYS[1])
if redis.call('DECR', KEYS[2]) <= 0 then redis.call('DEL', KEYS[2]) end
redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[2])`;

// ioredis's errors for a connection that dropped while its status still said ready.
const REDIS_CONNECTION_LOST = /Stream isn't writeable|Connection is closed|ECONNRESET|ECONNREFUSED|EPIPE/;

/**
 * Redis keys of a user's fence. No ':' before the user id, so the erasure's own sweep of the
 * user's Redis keys (RedisUserKeys: `*:<user>:*`, `*:<user>`) leaves them alone.
 */
function keysOf(userId: string): [closers: string, inside: string, epoch: string, opened: string] {
  return [`erasure-fence/${userId}/closers`, `erasure-fence/${userId}/inside`, `erasure-fence/${userId}/epoch`, `erasure-fence/${userId}/opened`];
}

// KEYS: (closers, inside, epoch, opened) per user; ARGV: ticket, lease deadline (ms), arrival (ms)
// -> the 1-based position of a user being erased (or whose erasure ended after the write
// arrived), or every user's epoch after entering all.
const ENTER = `
local n = #KEYS / 4
for i = 1, n do
  if tonumber(redis.call('GET', KEYS[i * 4 - 3]) or '0') > 0 then return i end
  if tonumber(redis.call('GET', KEYS[i * 4]) or '-1') >= tonumber(ARGV[3]) then return i end
end
local epochs = {}
for i = 1, n do
  redis.call('ZADD', KEYS[i * 4 - 2], ARGV[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[i * 4 - 2], 86400000)
  epochs[i] = tonumber(redis.call('GET', KEYS[i * 4 - 1]) or '0')
end
return epochs`;
