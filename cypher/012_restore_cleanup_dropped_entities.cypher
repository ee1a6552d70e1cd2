// 012_restore_cleanup_dropped_entities: data only. The daily cleanup used to soft-delete
// entities whose salience had decayed below 0.1 (valid_to set, dropped_by 'cleanup'), which
// took them out of recall and the studio although nobody deleted them. Decay now only lowers
// their rank; a backfill (src/migrate/backfills.ts) brings back the ones it hid. Entities a
// person deleted or merged are left as they are.
// Parameters: none.
