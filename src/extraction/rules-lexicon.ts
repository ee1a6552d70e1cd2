/**
 * Word lists of the rules extractor: which nouns are family roles, pets, occupations,
 * conditions and diets, and which predicates hold one value at a time. Kept apart from the
 * patterns so a new word is one line.
 */

/** Kinship and social roles ("my X is NAME") -> the predicate they become. */
export const ROLE_PREDICATE: Readonly<Record<string, string>> = {
  sister: 'sister',
  brother: 'brother',
  mom: 'mother',
  mum: 'mother',
  mother: 'mother',
  dad: 'father',
  father: 'father',
  wife: 'spouse',
  husband: 'spouse',
  spouse: 'spouse',
  partner: 'partner',
  girlfriend: 'partner',
  boyfriend: 'partner',
  fiance: 'partner',
  fiancee: 'partner',
  boss: 'boss',
  manager: 'boss',
  friend: 'friend',
  son: 'son',
  daughter: 'daughter',
  kid: 'child',
  child: 'child',
  colleague: 'colleague',
  coworker: 'colleague',
  cousin: 'cousin',
  aunt: 'aunt',
  uncle: 'uncle',
  niece: 'niece',
  nephew: 'nephew',
  grandma: 'grandmother',
  grandmother: 'grandmother',
  grandpa: 'grandfather',
  grandfather: 'grandfather',
  roommate: 'roommate',
  neighbor: 'neighbor',
  neighbour: 'neighbor',
  mentor: 'mentor',
  teacher: 'teacher',
  therapist: 'therapist',
  doctor: 'doctor',
  dentist: 'dentist',
  parents: 'parents',
};

/** Animals a person keeps; "my dog Pixel" is a `pet` fact. */
export const PET_WORDS = new Set([
  'dog',
  'puppy',
  'cat',
  'kitten',
  'rabbit',
  'bunny',
  'parrot',
  'bird',
  'hamster',
  'guinea pig',
  'turtle',
  'tortoise',
  'fish',
  'goldfish',
  'horse',
  'pony',
  'snake',
  'lizard',
  'ferret',
  'retriever',
  'golden retriever',
  'labrador',
  'poodle',
  'terrier',
  'beagle',
  'husky',
  'corgi',
]);
export const PET_PATTERN = [...PET_WORDS].sort((a, b) => b.length - a.length).join('|');

/** Relations with one value at a time: a new value contradicts (and by default supersedes) the old. */
export const SINGLE_VALUED = new Set(['name', 'works_at', 'job_title', 'lives_in', 'from', 'studies_at', 'spouse', 'partner', 'mother', 'father', 'boss', 'doctor', 'dentist', 'therapist', 'diet']);

/** Nouns that end an occupation ("a freelance graphic designer"). */
export const OCCUPATIONS = new Set(
  (
    'engineer developer programmer teacher nurse doctor physician surgeon dentist designer student counselor counsellor artist writer author manager ' +
    'lawyer attorney chef cook paramedic accountant architect scientist researcher professor lecturer consultant analyst journalist editor ' +
    'photographer musician singer actor actress pilot firefighter police officer electrician plumber carpenter mechanic farmer baker barista ' +
    'waiter waitress bartender cashier driver pharmacist therapist psychologist vet veterinarian librarian economist translator interpreter ' +
    'entrepreneur founder ceo cto marketer recruiter salesperson administrator secretary assistant technician tutor coach trainer dancer ' +
    'freelancer contractor intern nanny caregiver midwife paralegal banker broker realtor surveyor'
  ).split(' '),
);

/** Health conditions said as "I have X" (a possession otherwise). */
export const CONDITIONS = new Set(
  (
    'diabetes asthma adhd add autism dyslexia migraine migraines epilepsy arthritis anxiety depression insomnia eczema psoriasis ' +
    'celiac coeliac crohn lupus cancer covid flu cold fever hypertension cholesterol tinnitus scoliosis allergies allergy ibs ptsd ocd ' +
    'bronchitis pneumonia concussion sciatica gout anemia anaemia'
  ).split(' '),
);

/** Diets said as "I'm X" / "a X diet". */
export const DIETS = new Set([
  'vegetarian',
  'vegan',
  'pescatarian',
  'pescetarian',
  'keto',
  'ketogenic',
  'paleo',
  'kosher',
  'halal',
  'gluten-free',
  'dairy-free',
  'carnivore',
  'flexitarian',
  'low-carb',
  'raw',
]);

/** States said as "I'm X" that are health conditions. */
export const STATE_CONDITIONS = /^(?:pregnant|diabetic|asthmatic|epileptic|deaf|blind|colou?r ?blind|anemic|anaemic|autistic|dyslexic|(?:\w+ )?intolerant)\b/i;

/** Objects that are pronouns or placeholders, never a value. */
export const NOT_VALUES = new Set(['it', 'that', 'this', 'them', 'those', 'these', 'him', 'her', 'one', 'something', 'anything', 'everything', 'nothing', 'stuff', 'things', 'you', 'me', 'us']);
