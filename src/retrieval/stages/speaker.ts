import { words } from '../query-text';
import type { TurnStage } from '../turn-pipeline';

const FIRST_PERSON = new Set(['i', 'me', 'my', 'mine', 'myself']);
/** A question about the assistant's own words: "the list you provided", "our previous chat", "we discussed". */
const ASKS_ABOUT_ASSISTANT =
  /\byou (?:provided|gave|told|suggested|recommended|mentioned|said|listed|shared|explained|wrote|described|showed)\b|\b(?:our|the) (?:previous|last|earlier|past) (?:conversation|chat|discussion|exchange)\b|\bwe (?:discussed|talked about|chatted about|went over)\b/i;

/**
 * Speaker: a turn spoken by someone the query names × RECALL_SPEAKER_BOOST; a question in the
 * first person ("what car do I drive?") names the user, whose own turns hold the answer
 * rather than the assistant's, unless it asks about what the assistant said ("the list you
 * provided", "our previous chat"): then the assistant's turns hold it. Signal `speaker`
 * (note: who). Switch: RECALL_SPEAKER_BOOST.
 */
export const speakerStage: TurnStage = {
  name: 'speaker',
  phase: 'score',
  enabled: (r) => r.tech.speakerBoost,
  apply(candidates, r) {
    const queryWords = new Set(words(r.q.query));
    const aboutAssistant = ASKS_ABOUT_ASSISTANT.test(r.q.query);
    const firstPerson = !aboutAssistant && [...queryWords].some((w) => FIRST_PERSON.has(w));
    for (const c of candidates) {
      const hit = r.hits.get(c.id);
      const named =
        hit?.speaker && speakerNamed(hit.speaker, queryWords)
          ? hit.speaker
          : firstPerson && hit?.role === 'user'
            ? 'user (first person)'
            : aboutAssistant && hit?.role === 'assistant'
              ? 'assistant (asked what it said)'
              : undefined;
      if (!named) continue;
      c.score *= r.settings.speakerBoost;
      c.signals.speaker = { note: named };
    }
    return candidates;
  },
};

/** A speaker is "named" when every word of their name is a word of the query. */
function speakerNamed(speaker: string, queryWords: Set<string>): boolean {
  const parts = words(speaker);
  return parts.length > 0 && parts.every((p) => queryWords.has(p));
}
