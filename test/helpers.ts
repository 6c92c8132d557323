// The test support of test/support/, under its former name: only test/store/plans*.ts import it
// still. New code imports test/support/<concern>.ts directly (test/README.md).
export { forEachStore, startTestApp, TEST_NOW, type TestApp } from './support/apps.ts';
export type { StoreKind } from './support/stores.ts';
