export * from './contract';
export { Neo4jGoalStore } from './neo4j-goal-store';
export { GoalMemory } from './goal-memory';
