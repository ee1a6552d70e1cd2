import { feedbackTerms } from '../../src/retrieval/generators';
import { TIME_MENTION_CYPHER, turnFlags } from '../../src/episodic/prepare';
import { asksWhen, keywords, statementForm, withoutWords } from '../../src/retrieval/query-text';
import { parseTimeHint } from '../../src/retrieval/self-query';

describe('keywords', () => {
  it('drops question words, auxiliaries and pronouns, keeps topical words and numbers', () => {
    expect(keywords('When did Caroline go to the LGBTQ support group?')).toEqual(['caroline', 'go', 'lgbtq', 'support', 'group']);
    expect(keywords('What is my PIN? It was 4 digits, in May')).toEqual(['pin', '4', 'digits', 'may']);
    expect(keywords('What did she do?')).toEqual([]);
  });
});

describe('withoutWords', () => {
  const names = new Set(['melanie', 'caroline']);
  it('drops the words, with their possessive, and tidies the spacing', () => {
    expect(withoutWords('What activities does Melanie partake in?', names)).toBe('What activities does partake in?');
    expect(withoutWords("What is Caroline's favourite book, Melanie?", names)).toBe('What is favourite book?');
    expect(withoutWords('What did Caroline’s mum say?', names)).toBe('What did mum say?');
  });

  it('keeps the text when nothing is dropped or nothing would remain', () => {
    const q = 'What did Bob paint?';
    expect(withoutWords(q, names)).toBe(q);
    expect(withoutWords('Melanie?', names)).toBe('Melanie?');
  });
});

describe('statementForm', () => {
  it('drops the question word, its auxiliaries and the question mark', () => {
    expect(statementForm('What did Melanie paint recently?')).toBe('Melanie paint recently');
    expect(statementForm('When did Caroline go to the support group?')).toBe('Caroline go to the support group');
    expect(statementForm('How many musical instruments do I play?')).toBe('musical instruments do I play');
    expect(statementForm('  where has Jon been?? ')).toBe('Jon been');
  });

  it('keeps text that is not a wh-question, and never returns nothing', () => {
    expect(statementForm('Can you suggest a podcast for my commute?')).toBe('Can you suggest a podcast for my commute');
    expect(statementForm('whatever happened to Bob')).toBe('whatever happened to Bob');
    expect(statementForm('What?')).toBe('What?');
    expect(statementForm('gardening tips')).toBe('gardening tips');
  });
});

describe('asksWhen', () => {
  it('recognises questions that ask for a time or a duration', () => {
    for (const q of [
      'When did Caroline go to the support group?',
      'how long has Melanie been painting?',
      'What year did John move?',
      'Which month was the trip?',
      'So when was that?',
      'Since when do I own the car?',
      'Remind me when is the dentist appointment',
    ])
      expect(asksWhen(q)).toBe(true);
  });

  it('leaves other questions alone', () => {
    for (const q of ['What did Melanie paint?', 'Whenever I ask, what do you say?', 'How many pets does Andrew have?', 'What time-saving tips did you give me?', 'Where is the whenua?'])
      expect(asksWhen(q)).toBe(false);
  });
});

describe('TIME_MENTION_CYPHER', () => {
  // Neo4j's =~ is Java's String.matches: the whole string, flags inline. JavaScript reads
  // this pattern alike once the inline flags become RegExp flags.
  const dated = new RegExp(`^${TIME_MENTION_CYPHER.replace('(?is)', '')}$`, 'is');

  it('finds words that place a turn in time, across lines, and not look-alikes; turnFlags, which stores them, agrees', () => {
    for (const t of [
      'I went to the support group yesterday.',
      'We met two years ago',
      'Back in May I started',
      'It was 2019, I think',
      'See you next Friday!',
      'I have been painting for 7 years now',
      'this weekend was fun',
      'first line\nand then yesterday\nthird',
    ]) {
      expect(dated.test(t)).toBe(true);
      expect(turnFlags(t).dated).toBe(true);
    }
    for (const t of ['I may go later', 'My favourite colour is blue', 'Thanks, sounds great!', 'I painted a sunrise over the lake', 'Call me at 555-1234']) {
      expect(dated.test(t)).toBe(false);
      expect(turnFlags(t).dated).toBe(false);
    }
  });

  it('marks a turn that asks a question, as the Cypher rule did (trailing space ignored)', () => {
    expect(turnFlags('What did you paint? ').asks).toBe(true);
    expect(turnFlags('I asked: why? Then I left.').asks).toBe(false);
  });
});

describe('parseTimeHint', () => {
  const now = new Date('2023-08-20T12:00:00Z');
  it('reads a month and year as that month', () => {
    expect(parseTimeHint('What did we do in May 2023?', now)).toEqual({ since: '2023-05-01T00:00:00.000Z', until: '2023-05-31T23:59:59.999Z', text: 'May 2023' });
  });
  it('reads a bare year as that year', () => {
    expect(parseTimeHint('What did Melanie paint in 2022?', now)).toMatchObject({ since: '2022-01-01T00:00:00.000Z', until: '2022-12-31T23:59:59.999Z' });
  });
  it('reads "last week" as about a week ago, plus or minus half a week', () => {
    const hint = parseTimeHint('What did I say last week about the trip?', now)!;
    expect(hint.text).toBe('last week');
    expect(Date.parse(hint.since)).toBeLessThan(Date.parse('2023-08-13T00:00:00Z'));
    expect(Date.parse(hint.until)).toBeGreaterThan(Date.parse('2023-08-13T00:00:00Z'));
    expect(Date.parse(hint.until) - Date.parse(hint.since)).toBe(7 * 86_400_000);
  });
  it('reads "yesterday" as that day', () => {
    expect(parseTimeHint('what did he do yesterday', now)).toMatchObject({ since: '2023-08-19T00:00:00.000Z', until: '2023-08-19T23:59:59.999Z' });
  });
  it('finds nothing in a query without time words', () => {
    expect(parseTimeHint('When did Caroline go to the support group?', now)).toBeUndefined();
  });
  it('reads a month without a year as the last one before now, not the next', () => {
    const november = new Date('2022-11-12T12:00:00Z');
    expect(parseTimeHint('Which outdoor spot did Joanna visit in May?', november)).toMatchObject({ since: '2022-05-01T00:00:00.000Z', until: '2022-05-31T23:59:59.999Z' });
  });
  it('gives no hint for a time after now: memories were said before it', () => {
    // 2023-08-20 is a Sunday; the question is asked on the Tuesday after it.
    const tuesday = new Date('2023-08-22T12:00:00Z');
    expect(parseTimeHint('Any tips for my visit to the music store this weekend?', tuesday)).toBeUndefined();
    expect(parseTimeHint('What should I cook tomorrow?', tuesday)).toBeUndefined();
    expect(parseTimeHint('What are my plans for next week?', tuesday)).toBeUndefined();
  });
  it('gives no hint for "tonight" or "today" unless the question asks about the past', () => {
    const evening = new Date('2023-05-30T23:43:00Z');
    expect(parseTimeHint('Can you recommend a show or movie for me to watch tonight?', evening)).toBeUndefined();
    expect(parseTimeHint('What is on my schedule today?', evening)).toBeUndefined();
    expect(parseTimeHint('What did I eat today?', evening)).toMatchObject({ since: '2023-05-30T00:00:00.000Z', until: '2023-05-30T23:59:59.999Z', text: 'today' });
  });
  it('keeps a long range that reaches now ("this year")', () => {
    expect(parseTimeHint('Which books am I reading this year?', now)).toMatchObject({ since: '2023-01-01T00:00:00.000Z' });
  });
});

describe('feedbackTerms', () => {
  it('keeps words shared by at least two top hits, minus the query words', () => {
    expect(feedbackTerms(['the pottery class was fun', 'pottery class again today', 'I like painting'], new Set(['class']))).toEqual(['pottery']);
  });
});
