import { fuseStrategies, strategyId, successRate, type Strategy } from '../../src/procedural';

const s = (id: string, successCount: number, failureCount: number): Strategy => ({
  id,
  userId: 'u',
  channel: '_global',
  description: id,
  contextPattern: '',
  toolSequence: [],
  successCount,
  failureCount,
  successRate: successRate(successCount, failureCount),
  createdAt: '',
  lastUsed: null,
});

describe('strategy ranking', () => {
  it('smooths success rates so an untested strategy sits at 0.5', () => {
    expect(successRate(0, 0)).toBe(0.5);
    expect(successRate(8, 0)).toBeCloseTo(0.9);
    expect(successRate(0, 8)).toBeCloseTo(0.1);
  });
  it('rewards agreement of both lists and a proven record; drops below minSuccessRate', () => {
    const proven = s('proven', 9, 0);
    const failing = s('failing', 0, 9);
    const fresh = s('fresh', 0, 0);
    const fused = fuseStrategies([[{ strategy: failing }, { strategy: proven }, { strategy: fresh }], [{ strategy: proven }]], 3);
    expect(fused.map((f) => f.strategy.id)).toEqual(['proven', 'fresh', 'failing']);
    expect(fuseStrategies([[{ strategy: failing }, { strategy: proven }]], 5, 0.3).map((f) => f.strategy.id)).toEqual(['proven']);
    expect(fuseStrategies([[{ strategy: proven }, { strategy: fresh }]], 1)).toHaveLength(1);
  });
  it('derives one id per (user, channel, task, tools), so relearning reinforces', () => {
    const a = strategyId('u', '_global', 'Debug  CI', ['grep', 'run_tests'], 'x');
    expect(strategyId('u', '_global', 'debug ci', ['grep', 'run_tests'], 'other words')).toBe(a);
    expect(strategyId('u2', '_global', 'debug ci', ['grep', 'run_tests'], 'x')).not.toBe(a);
    expect(strategyId('u', '_global', 'debug ci', ['run_tests', 'grep'], 'x')).not.toBe(a);
    expect(a).toMatch(/^strategy-[0-9a-f]{32}$/);
  });
});
