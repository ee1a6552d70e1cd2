export * from './contract';
export { PgSettingsStore } from './pg-settings-store';
