// The formats `helixd export` writes: its own module, so that the command line's help names them
// without loading the export (and the records' schemas) it does not run.

/** NDJSON (any size), or a fixture document (`{"users": [...], ...}`, for small worlds). */
export const EXPORT_FORMATS = ['ndjson', 'fixture'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
