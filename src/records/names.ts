// The record kinds' names in the order of RECORD_KINDS (src/records/kinds.ts, which checks that the
// two agree when it loads): the command line's help lists them without loading the kinds' schemas,
// TypeBox being a good part of a start-up (bench/startup.ts).
export const RECORD_KIND_NAMES = [
  'user',
  'client',
  'game',
  'extension',
  'tag',
  'channel',
  'stream',
  'video',
  'clip',
  'marker',
  'subscription',
  'follow',
  'moderator',
  'game_day',
  'extension_day',
] as const;
