import { readFileSync } from 'node:fs';
import { normaliseEvidence } from './recall-datasets';

/**
 * LoCoMo's gold observations (`observation.session_<n>_observation.<speaker>`: facts about the
 * two speakers, LLM-written by the dataset's authors, each with its evidence turn ids) and who
 * spoke each turn. Evidence is a string or a list of strings, normalised as the QA evidence is
 * (`normaliseEvidence`); ids that point at no turn are dropped, and an observation left with
 * none is counted in `unresolved` rather than scored.
 */
export interface GoldObservation {
  conversation: string;
  session: number;
  /** The speaker the observation is filed under (always one of the two). */
  speaker: string;
  text: string;
  /** Resolvable dia ids ("D1:3"), in the order given. */
  evidence: string[];
}

export interface LocomoSpeakers {
  /** speaker_a: stored as the user by bench:recall and bench:consolidation. */
  a: string;
  /** speaker_b: stored as the assistant there. */
  b: string;
}

export interface ObservationDataset {
  speakers: Map<string, LocomoSpeakers>;
  observations: GoldObservation[];
  /** `<conversation> <dia id>` -> the turn's speaker. */
  turnSpeakers: Map<string, string>;
  unresolved: number;
}

export const turnRef = (conversation: string, diaId: string) => `${conversation} ${diaId}`;

interface RawSample {
  sample_id: string;
  conversation: Record<string, unknown> & { speaker_a: string; speaker_b: string };
  observation: Record<string, Record<string, Array<[string, string | string[]]>>>;
}

export function loadLocomoObservations(path: string, only?: ReadonlySet<string>): ObservationDataset {
  const samples = (JSON.parse(readFileSync(path, 'utf8')) as RawSample[]).filter((s) => !only || only.has(s.sample_id));
  const out: ObservationDataset = { speakers: new Map(), observations: [], turnSpeakers: new Map(), unresolved: 0 };
  for (const s of samples) {
    const c = s.conversation;
    out.speakers.set(s.sample_id, { a: c.speaker_a, b: c.speaker_b });
    for (const [k, v] of Object.entries(c)) {
      if (!/^session_\d+$/.test(k)) continue;
      for (const t of v as Array<{ speaker: string; dia_id: string }>) out.turnSpeakers.set(turnRef(s.sample_id, t.dia_id), t.speaker);
    }
    for (const [k, bySpeaker] of Object.entries(s.observation)) {
      const session = Number(/^session_(\d+)_observation$/.exec(k)?.[1]);
      for (const [speaker, items] of Object.entries(bySpeaker)) {
        for (const [text, raw] of items) {
          const evidence = normaliseEvidence(Array.isArray(raw) ? raw : [raw]).filter((d) => out.turnSpeakers.has(turnRef(s.sample_id, d)));
          if (evidence.length === 0) out.unresolved++;
          else out.observations.push({ conversation: s.sample_id, session, speaker, text, evidence });
        }
      }
    }
  }
  return out;
}
