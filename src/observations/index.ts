export * from './contract';
export { PgObservationQueue } from './pg-observation-queue';
export { PgProfileStore, forgetProfile, mergeProfile, profileChanges, profileFactOf, renderNarrative, type ProfileEntry, type Profile, type ProfileFact, type UserProfile } from './profile';
export { PgLearnedInfoStore, type LearnedInfoStore } from './learned-info';
