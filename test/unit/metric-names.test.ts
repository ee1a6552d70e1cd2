import { namingProblems, parseExposition } from '../support/metric-names';

const family = (name: string, type: string, labels: string[] = [], help = 'something') => ({ name, type, help, labels: new Set(labels) });

describe("Prometheus' naming rules (the check the /metrics test runs when promtool is absent)", () => {
  it('accepts names that follow them', () => {
    for (const f of [
      family('mnemograph_http_request_duration_seconds', 'histogram', ['method', 'route', 'status', 'le']),
      family('mnemograph_job_items_total', 'counter', ['job', 'stat']),
      family('mnemograph_job_last_success_timestamp_seconds', 'gauge', ['job']),
      family('process_cpu_seconds_total', 'counter'),
      family('nodejs_heap_size_total_bytes', 'gauge'),
      family('mnemograph_graph_nodes', 'gauge', ['label']),
    ])
      expect(namingProblems(f)).toEqual([]);
  });

  it.each([
    [family('mnemograph_job_items_24h', 'counter'), 'counter metrics should have "_total" suffix'],
    [family('nodejs_active_handles_total', 'gauge'), 'non-counter metrics should not have "_total" suffix'],
    [family('mnemograph_latency_milliseconds', 'histogram'), 'use base units: "milliseconds" should be seconds'],
    [family('mnemograph_cache_mb', 'gauge'), 'use base units: "mb" should be bytes'],
    [family('mnemograph_job_last_success_age_seconds_max', 'gauge'), 'the unit "seconds" must be the suffix'],
    [family('mnemograph_requests_count', 'histogram'), 'histogram names must not end in _count, _sum or _bucket'],
    [family('mnemograph_queue_gauge', 'gauge'), 'should not include the type ("gauge")'],
    [family('mnemograph_recallResults', 'gauge'), 'use snake_case'],
    [family('mnemograph:recall', 'gauge'), 'colons are reserved'],
    [family('9lives', 'gauge'), 'not a valid metric name'],
    [family('mnemograph_things', 'gauge', ['__name']), 'reserved __ prefix'],
    [family('mnemograph_things', 'gauge', ['le']), 'label "le" is reserved'],
    [family('mnemograph_things', 'histogram', ['quantile', 'le']), 'label "quantile" is reserved'],
    [family('mnemograph_things', 'gauge', [], ''), 'no HELP text'],
  ])('flags %j', (f, problem) => {
    expect(namingProblems(f).join('\n')).toContain(problem);
  });

  it('reads families, types and labels from the text format, histogram samples under their base name', () => {
    const text = [
      '# HELP a_seconds latency',
      '# TYPE a_seconds histogram',
      'a_seconds_bucket{le="0.1",route="/x"} 1',
      'a_seconds_sum{route="/x"} 0.05',
      'a_seconds_count{route="/x"} 1',
      '# HELP b_total things',
      '# TYPE b_total counter',
      'b_total{job="decay",stat="facts"} 3',
      '',
    ].join('\n');
    expect(parseExposition(text)).toEqual([
      { name: 'a_seconds', type: 'histogram', help: 'latency', labels: new Set(['le', 'route']) },
      { name: 'b_total', type: 'counter', help: 'things', labels: new Set(['job', 'stat']) },
    ]);
  });
});
