import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defaultLocomoPath, loadLocomo, loadLongMemEval, normaliseEvidence, parseLocomoDate, parseLongMemEvalDate } from '../../bench/recall-datasets';
import { average, percentiles, publishedSessionRecall, rankSessions, scoreFacts, scoreQuestion } from '../../bench/recall-metrics';

describe('recall benchmark metrics', () => {
  it('computes turn recall, hit, nDCG and MRR against gold turns', () => {
    const ranked = ['s1#0', 's1#1', 's2#4', 's3#0', 's2#5', 's4#1'];
    const s = scoreQuestion(ranked, ['s2#4', 's4#1', 's9#9'], ['s2', 's4', 's9']);
    expect(s.turn_recall_at_5).toBeCloseTo(1 / 3);
    expect(s.turn_recall_at_10).toBeCloseTo(2 / 3);
    expect(s.hit_at_10).toBe(1);
    expect(s.mrr).toBeCloseTo(1 / 3);
    const dcg = 1 / Math.log2(4) + 1 / Math.log2(7);
    const idcg = 1 / Math.log2(2) + 1 / Math.log2(3) + 1 / Math.log2(4);
    expect(s.ndcg_at_10).toBeCloseTo(dcg / idcg);
    // Sessions by best turn: s1, s2, s3, s4.
    expect(rankSessions(ranked)).toEqual(['s1', 's2', 's3', 's4']);
    expect(s.session_recall_at_10).toBeCloseTo(2 / 3);
    expect(s.session_any_at_5).toBe(1);
  });

  it('scores misses as zero and leaves out metrics without gold', () => {
    expect(scoreQuestion(['a#1'], ['b#1'], [])).toEqual({ turn_recall_at_5: 0, turn_recall_at_10: 0, hit_at_10: 0, ndcg_at_10: 0, mrr: 0 });
    expect(scoreQuestion(['a#1'], [], ['a'])).toEqual({ session_recall_at_10: 1, session_any_at_5: 1, session_any_at_10: 1 });
  });

  it('scores recalled facts by the gold turns they were learned from, in the first 10', () => {
    const sources = ['a#1', undefined, 'b#2', 'a#1', ...Array.from({ length: 6 }, () => 'z#0'), 'c#3'];
    expect(scoreFacts(sources, ['b#2', 'c#3'])).toEqual({ fact_hit_at_10: 1, fact_evidence_recall_at_10: 0.5 });
    expect(scoreFacts(sources, ['c#3'])).toEqual({ fact_hit_at_10: 0, fact_evidence_recall_at_10: 0 });
    expect(scoreFacts([], ['c#3'])).toEqual({ fact_hit_at_10: 0, fact_evidence_recall_at_10: 0 });
    expect(scoreFacts(sources, [])).toEqual({});
  });

  it('counts a question without evidence as 1.0 under the published protocol', () => {
    expect(publishedSessionRecall(['a#1'], [])).toBe(1);
    expect(publishedSessionRecall(['a#1', 'b#2'], ['b', 'c'])).toBe(0.5);
  });

  it('averages each metric over the questions that have it', () => {
    expect(average([{ mrr: 1 }, { mrr: 0, hit_at_10: 1 }, {}])).toEqual({ n: 3, mrr: 0.5, hit_at_10: 1 });
    expect(percentiles([5, 1, 4, 2, 3])).toEqual({ p50: 3, p95: 5 });
  });
});

describe('recall benchmark datasets', () => {
  it('normalises malformed LoCoMo evidence ids as the dataset README says', () => {
    expect(normaliseEvidence(['D8:6; D9:17', 'D9:1 D4:4 D4:6', 'D:11:26', 'D30:05', 'D'])).toEqual(['D8:6', 'D9:17', 'D9:1', 'D4:4', 'D4:6', 'D11:26', 'D30:5']);
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z');
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe('2023-09-13T00:09:00.000Z');
  });

  // The dataset sits outside the repository (CC BY-NC); without it this one check cannot run.
  const locomo = defaultLocomoPath();
  (existsSync(locomo) ? it : it.skip)('loads LoCoMo with the counts the dataset README gives', () => {
    const ds = loadLocomo(locomo);
    expect(ds.conversations).toHaveLength(10);
    expect(ds.conversations.reduce((n, c) => n + c.sessions.length, 0)).toBe(272);
    expect(ds.conversations.reduce((n, c) => n + c.sessions.reduce((k, s) => k + s.turns.length, 0), 0)).toBe(5882);
    expect(ds.questions).toHaveLength(1986);
    expect(ds.questions.filter((q) => q.scored)).toHaveLength(1536);
    const first = ds.questions[0]!;
    expect(first).toMatchObject({ question: 'When did Caroline go to the LGBTQ support group?', category: '2', goldTurns: ['conv-26-s1#2'], goldSessions: ['conv-26-s1'] });
    // Image turns carry their caption so they can be found.
    expect(ds.conversations[0]!.sessions.flatMap((s) => s.turns).some((t) => t.content.includes('[image: '))).toBe(true);
  });

  it('loads the LongMemEval format: one user per record, gold from has_answer, _abs skipped', () => {
    const ds = loadLongMemEval(resolve(__dirname, '../fixtures/longmemeval-mini.json'));
    expect(ds.conversations.map((c) => c.key)).toEqual(['lme-mini-1', 'lme-mini-2']);
    expect(ds.questions.map((q) => q.id)).toEqual(['lme-mini-1', 'lme-mini-2']);
    expect(ds.questions[1]).toMatchObject({
      category: 'temporal-reasoning',
      goldTurns: ['lme-mini-2-s-shoes#0', 'lme-mini-2-s-marathon#0'],
      goldSessions: ['lme-mini-2-s-shoes', 'lme-mini-2-s-marathon'],
      askedAt: '2023-09-30T08:00:00.000Z',
    });
    expect(ds.conversations[1]!.sessions.map((s) => s.date)).toEqual(['2023-09-03T11:00:00.000Z', '2023-09-08T16:45:00.000Z', '2023-09-15T20:00:00.000Z']);
    expect(parseLongMemEvalDate('2023/05/20 (Sat) 02:21')).toBe('2023-05-20T02:21:00.000Z');
  });
});
