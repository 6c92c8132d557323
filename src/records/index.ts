export { FieldRule } from './fields.ts';
export { RECORD_KINDS, type RecordKind, recordKind, recordKindByPlural } from './kinds.ts';
export { type RecordPage, readRecordPage, readRecords } from './read.ts';
export {
  deleteRecord,
  ImportedKeys,
  keyFromText,
  type PreparedRun,
  prepareRuns,
  RecordError,
  type RecordInput,
  readRecord,
  type WriteMode,
  type WriteOptions,
  writeRecords,
  writeRuns,
} from './write.ts';
