import type { ExtractionWindow } from './contract';

/** The combined extraction instruction: entities, facts and relationships in one answer. */
export const EXTRACTION_SYSTEM_PROMPT = `You extract long-term memory from a conversation window.
Return ONE JSON object and nothing else:
{
  "entities": [{"name": str, "type": "person|place|organization|project|tool|concept|event|other", "aliases": [str], "description": str}],
  "facts": [{"claim": str, "subject": str, "relation": snake_case str, "object": str, "polarity": "positive|negative",
             "single_valued": bool, "certainty": "explicit|implied|inferred|uncertain", "temporal": "current|past|future",
             "is_correction": bool, "ends": bool, "source_turn": "T<n>", "valid_from": ISO date or null, "valid_to": ISO date or null}],
  "relationships": [{"source": entity name, "target": entity name,
                     "type": "RELATED_TO|PART_OF|LOCATED_IN|WORKS_FOR|KNOWS|CREATED_BY|REFERENCES|<CUSTOM_TYPE>", "properties": {}}]
}
Rules:
- "subject" is the entity the fact is about; use the speaker's name for first-person statements.
- "relation" is a short predicate (works_at, lives_in, likes, sister, boss, birthday...). single_valued is true when the
  subject has one value at a time (works_at, lives_in, age).
- certainty: explicit = stated outright; implied = clearly implied; inferred = your inference; uncertain = a guess.
- is_correction is true when the speaker corrects something said earlier ("actually...", "no, I meant...").
- ends is true when the statement ends a state (quit, left, no longer, sold, broke up, stopped, moved away): give the
  relation and the value that ended (no object when every value ended, e.g. "I quit my job") with temporal "past".
- Questions, hypotheticals, wishes and hedged statements ("maybe", "I think", "thinking of") are not facts.
- Only durable facts about people, places, organizations, projects, preferences and plans. No small talk.
- Resolve relative dates against the turn timestamps.`;

/** Renders the window as numbered turns the model can cite as "T<n>". */
export function renderWindow(window: ExtractionWindow): string {
  const lines = window.turns.map((t, i) => {
    const who = t.speaker ?? (t.role === 'user' ? (window.userName ?? 'user') : t.role);
    return `[T${i}] ${t.timestamp} ${who} (${t.role}): ${t.content}`;
  });
  return `Conversation window:\n${lines.join('\n')}\n\nReturn the JSON object.`;
}
