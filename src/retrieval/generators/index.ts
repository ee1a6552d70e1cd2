import type { CandidateGenerator } from '../turn-pipeline';
import { fulltextGenerator } from './fulltext';
import { vectorGenerator } from './vector';

export { feedbackTerms } from './fulltext';

/**
 * The turn candidate generators, in fusion order (a later list's hit data replaces an
 * earlier one's). A new candidate list is one module here and one line in this list.
 */
export const TURN_GENERATORS: readonly CandidateGenerator[] = [fulltextGenerator, vectorGenerator];
