/**
 * Mann-Whitney U test (normal approximation with tie correction): the z score of sample `a` ranking below
 * (negative) or above (positive) sample `b`. Used by the authentication timing bench.
 */
export function mannWhitneyZ(a: number[], b: number[]): number {
  const all = [...a.map((v) => ({ v, fromA: true })), ...b.map((v) => ({ v, fromA: false }))].sort((x, y) => x.v - y.v);
  const n = all.length;
  let rankSumA = 0;
  let tieTerm = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && all[j + 1]!.v === all[i]!.v) j++;
    const rank = (i + j) / 2 + 1;
    const t = j - i + 1;
    tieTerm += t * t * t - t;
    for (let k = i; k <= j; k++) if (all[k]!.fromA) rankSumA += rank;
    i = j + 1;
  }
  const n1 = a.length;
  const n2 = b.length;
  const u = rankSumA - (n1 * (n1 + 1)) / 2;
  const mean = (n1 * n2) / 2;
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - tieTerm / (n * (n - 1))));
  return sd === 0 ? 0 : (u - mean) / sd;
}
