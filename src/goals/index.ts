export * from './contract';
export { Neo4jGoalStore } from './neo4j-goal-store';
export { GoalMemory } from './goal-memory';
export { Neo4jGoalUpkeep } from './neo4j-goal-upkeep';
