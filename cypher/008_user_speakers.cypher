// 008_user_speakers: data only. Users keep the distinct speakers of all their conversations
// (`speakers` on the User node, at most 200, written with each turn since session 7). Recall
// reads them on a user's first recall in a process and once a minute after; reading every
// conversation's `speakers` (007) instead cost 30-50 ms warm and ~300 ms cold for a user with
// 10,000 conversations. Users stored before get the list from their conversations' lists by a
// backfill (src/migrate/backfills.ts).
// Parameters: none.
