export { FieldRule } from './fields.ts';
export { RECORD_KINDS, type RecordKind, recordKind, recordKindByPlural } from './kinds.ts';
export { type RecordPage, readRecordPage, readRecords } from './read.ts';
export {
  deleteRecord,
  keyFromText,
  RecordError,
  type RecordInput,
  readRecord,
  type WriteMode,
  type WriteOptions,
  writeRecords,
} from './write.ts';
