import type { TurnStage } from '../turn-pipeline';
import { diversityStage } from './diversity';
import { neighbourStage } from './neighbour';
import { questionStage } from './question';
import { recencyStage } from './recency';
import { speakerStage } from './speaker';
import { timeAnswerStage } from './time-answer';
import { timeHintStage } from './time-hint';

/**
 * The turn ranking stages, in the order they run (score stages, then order stages after the
 * sort; see TurnStage). A new signal is one module here and one line in this list.
 */
export const TURN_STAGES: readonly TurnStage[] = [speakerStage, timeAnswerStage, questionStage, neighbourStage, recencyStage, timeHintStage, diversityStage];
