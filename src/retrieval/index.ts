export * from './contract';
export { HybridRecallEngine, feedbackTerms, type RecallEngineDeps } from './recall-engine';
export { Neo4jReinforcer } from './reinforcement';
export { formatContext, type FormatOptions } from './format-context';
export { weightedRrf, smoothNeighbours, capPerGroup, recencyScore } from './fusion';
export { buildLuceneQuery, escapeLucene, keywords } from './query-text';
export { parseTimeHint } from './self-query';
export { recallSettingsFrom } from './settings';
export { createDefaultSources, SemanticFactSource, SemanticEntitySource, ProceduralStrategySource, GoalRecallSource, PgProfileSource, type ProvenanceFilter } from './sources';
