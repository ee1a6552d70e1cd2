/**
 * Turns text into unit-length vectors. One implementation per provider; the model id and
 * dimension are part of the contract because Neo4j's vector indexes are locked to them.
 */
export interface EmbedOptions {
  priority?: 'interactive' | 'background';
  input?: 'query' | 'document';
}

export interface Embedder {
  readonly provider: string;
  readonly model: string;
  readonly dimensions: number;
  /**
   * Embeds `texts` in order, returning one vector of `dimensions` numbers per text.
   * `priority: 'interactive'` (a query on the hot path) is served before queued background
   * work. `input: 'query'` marks search queries, which models trained with instructions
   * (e5: "query: " / "passage: ") embed differently from the memories searched; the default
   * is 'document'. Rejects with an upstream error when the model or API fails; never returns
   * a partial batch.
   */
  embed(texts: string[], opts?: EmbedOptions): Promise<number[][]>;
  close(): Promise<void>;
}
