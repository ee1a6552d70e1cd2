export * from './schema';
export type { MemoryBrowserDeps } from './memory-browser';
export type { ConversationBrowser, ConversationInfo } from '../episodic/contract';
export type { KnowledgeCuration, MergeEntitiesResult } from '../semantic/contract';
