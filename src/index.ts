/**
 * The library entry point (`import { createMnemograph, loadConfig } from 'mnemograph'`).
 * The HTTP client lives at `mnemograph/client`.
 */
export { loadConfig, type Config } from './config';
export { createMnemograph, type Mnemograph, type CreateOptions } from './container';
export { AgentMemory, WorkingSession } from './memory/agent-memory';
export * from './errors';
export type { Embedder } from './embedding';
export type { Turn, TurnInput, StoreTurnResult, ScoredTurn } from './episodic';
export { userScope, type AccessScope } from './access';
export { VERSION } from './package-info';
