import type { Certainty } from './contract';

/** Certainty labels mapped to confidence (seed 003): explicit 0.95, implied 0.85, inferred 0.70, uncertain 0.50. */
export const CERTAINTY_CONFIDENCE: Readonly<Record<Certainty, number>> = {
  explicit: 0.95,
  implied: 0.85,
  inferred: 0.7,
  uncertain: 0.5,
};

export function calibrate(certainty: Certainty): number {
  return CERTAINTY_CONFIDENCE[certainty];
}

/**
 * The nearest label for a bare number some models return instead of a label, so a 0.9
 * becomes `implied` (0.85) rather than being trusted at face value.
 */
export function certaintyFromNumber(value: number): Certainty {
  const v = value > 1 && value <= 100 ? value / 100 : value;
  let best: Certainty = 'uncertain';
  let bestDist = Infinity;
  for (const [label, c] of Object.entries(CERTAINTY_CONFIDENCE) as Array<[Certainty, number]>) {
    const d = Math.abs(c - v);
    if (d < bestDist) {
      best = label;
      bestDist = d;
    }
  }
  return best;
}
