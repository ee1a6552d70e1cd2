import type { Config } from '../config';
import type { RecallSettings } from './contract';

/** Recall settings from the resolved configuration (RECALL_* settings). */
export function recallSettingsFrom(config: Config['recall']): RecallSettings {
  return { ...config, techniques: { ...config.techniques }, weights: { ...config.weights } };
}
