/**
 * Prints one closing line "tests: N passed, N failed, N skipped" after the jest run, so CI
 * readers (and people) see the totals in a runner-neutral form.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    process.stdout.write(`\ntests: ${results.numPassedTests} passed, ${results.numFailedTests} failed, ${skipped} skipped\n`);
  }
}
module.exports = SummaryReporter;
