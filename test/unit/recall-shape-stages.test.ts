import { turnId } from '../../src/access';
import { loadConfig } from '../../src/config';
import type { TurnHit } from '../../src/episodic/contract';
import { recallSettingsFrom, type RankInput, type TurnCandidate } from '../../src/retrieval';
import { neighbourStage, speaksByName } from '../../src/retrieval/stages/neighbour';
import { speakerStage } from '../../src/retrieval/stages/speaker';

const settings = recallSettingsFrom(loadConfig({}).recall);

function hit(index: number, over: Partial<TurnHit> = {}): TurnHit {
  return {
    id: turnId('c', index),
    conversationId: 'c',
    index,
    channel: 'default',
    speaker: null,
    role: index % 2 === 0 ? 'user' : 'assistant',
    timestamp: '2024-01-01T00:00:00Z',
    score: 1,
    asks: false,
    dated: false,
    ...over,
  };
}

/** The fields the two stages read; the rest of a recall does not matter to them. */
function input(query: string, hits: TurnHit[]): RankInput {
  return { q: { query }, settings, tech: settings.techniques, hits: new Map(hits.map((h) => [h.id, h])) } as unknown as RankInput;
}

const scored = (id: string, score: number): TurnCandidate => ({ id, score, signals: {} });

describe('the conversation shape in the turn stages', () => {
  it('tells a named speaker from a role', () => {
    expect(speaksByName({ speaker: 'Caroline' })).toBe(true);
    expect(speaksByName({ speaker: 'assistant' })).toBe(false);
    expect(speaksByName({ speaker: ' User ' })).toBe(false);
    expect(speaksByName({ speaker: null })).toBe(false);
    expect(speaksByName({ speaker: '' })).toBe(false);
  });

  it('passes the LoCoMo share between named speakers and the chat share in a user–assistant chat', () => {
    const people = [hit(4, { speaker: 'Caroline', asks: true }), hit(5, { speaker: 'Melanie' }), hit(6, { speaker: 'Caroline' })];
    const out = new Map(neighbourStage.apply([scored(turnId('c', 4), 1)], input('what did she paint?', people)).map((c) => [c.id, c.score]));
    // a question passes its undemoted score × the answer boost to its reply, two turns either side
    expect(out.get(turnId('c', 5))).toBeCloseTo((settings.neighbourWeight * settings.answerBoost) / settings.questionWeight, 6);
    expect(out.get(turnId('c', 6))).toBeCloseTo(((settings.neighbourWeight / 2) * settings.answerBoost) / settings.questionWeight, 6);

    const chat = [hit(4, { asks: true }), hit(5), hit(6)];
    const chatOut = new Map(neighbourStage.apply([scored(turnId('c', 4), 1)], input('what did I buy?', chat)).map((c) => [c.id, c.score]));
    expect(chatOut.get(turnId('c', 5))).toBeCloseTo(settings.chatNeighbourWeight, 6);
    expect(chatOut.get(turnId('c', 3))).toBeCloseTo(settings.chatNeighbourWeight * settings.neighbourBackward, 6);
    expect(chatOut.get(turnId('c', 6)) ?? 0).toBe(0);
    expect(chatOut.get(turnId('c', 4))).toBe(1);
  });

  it("boosts the user's turns for a first-person question, the assistant's for one about what it said", () => {
    const hits = [hit(0), hit(1)];
    const mine = speakerStage.apply([scored(turnId('c', 0), 1), scored(turnId('c', 1), 1)], input('What did I bake for my niece?', hits));
    expect(mine.map((c) => c.score)).toEqual([settings.speakerBoost, 1]);
    const its = speakerStage.apply([scored(turnId('c', 0), 1), scored(turnId('c', 1), 1)], input('Can you remind me what was the 7th job in the list you provided?', hits));
    expect(its.map((c) => c.score)).toEqual([1, settings.speakerBoost]);
    expect(its[1]!.signals.speaker).toEqual({ note: 'assistant (asked what it said)' });
    const chat = speakerStage.apply([scored(turnId('c', 0), 1), scored(turnId('c', 1), 1)], input('I was going through our previous chat about prayer times', hits));
    expect(chat.map((c) => c.score)).toEqual([1, settings.speakerBoost]);
  });
});
