export * from './scope';
export * from './namespace';
