import neo4j from 'neo4j-driver';
const d = neo4j.driver('bolt://127.0.0.1:7687', neo4j.auth.basic('neo4j', 'mnemograph-dev'));
const s = d.session();
const r = await s.run(process.argv[2]!);
console.log(JSON.stringify(r.records.map((x) => x.toObject()), (k, v) => (typeof v === 'bigint' ? Number(v) : v && v.low !== undefined && v.high !== undefined ? neo4j.integer.toNumber(v) : v), 1));
await s.close(); await d.close();
