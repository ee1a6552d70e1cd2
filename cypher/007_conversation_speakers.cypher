// 007_conversation_speakers: data only. Conversations keep the distinct speakers of their
// turns (`speakers`, at most 50, written with each turn since session 5), which recall reads
// to leave a user's speaker names out of its searches. Conversations stored before that get
// the list from their turns by a backfill (src/migrate/backfills.ts); until then recall
// learned those names only from its hits.
// Parameters: none.
