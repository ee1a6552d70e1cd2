export * from './contract';
export { OpsReader } from './ops-reader';
export { OpsQuerySchema, OpsReportSchema } from './schema';
