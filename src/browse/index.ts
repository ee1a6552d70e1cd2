export * from './contract';
export { MemoryBrowser } from './memory-browser';
