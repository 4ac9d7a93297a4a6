/** Benchmarks run apart from tests (`npm run bench`). */
console.log('no benchmarks yet');
