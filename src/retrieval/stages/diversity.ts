import { parseTurnId } from '../../access';
import { capPerGroup } from '../fusion';
import type { TurnStage } from '../turn-pipeline';

/**
 * Diversity: at most RECALL_DIVERSITY_CAP turns per conversation ahead of the rest (those
 * over the cap move behind, in order). No signal. Switch: RECALL_DIVERSITY_CAP (0 = off).
 */
export const diversityStage: TurnStage = {
  name: 'diversity',
  phase: 'order',
  enabled: (r) => r.tech.diversityCap > 0,
  apply: (candidates, r) => capPerGroup(candidates, (c) => parseTurnId(c.id)?.conversationId ?? c.id, r.tech.diversityCap),
};
