// A small seeded PRNG (sfc32) so that the same seed gives the same data on every machine and
// Node version; Math.random can't be seeded. Each table draws from its own stream (seed + name),
// so changing how one table is generated does not reshuffle the others.
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream: string) {
    // Mix the seed and the stream name into four 32-bit words (FNV-1a, then warm up).
    let h = 0x811c9dc5 ^ seed;
    const words: number[] = [];
    for (let i = 0; i < 4; i++) {
      for (const ch of `${stream}#${i}#${seed}`) {
        h ^= ch.charCodeAt(0);
        h = Math.imul(h, 0x01000193);
      }
      words.push(h >>> 0);
    }
    [this.a, this.b, this.c, this.d] = words as [number, number, number, number];
    for (let i = 0; i < 16; i++) this.next();
  }

  /** uniform in [0, 1) */
  next(): number {
    this.a >>>= 0;
    this.b >>>= 0;
    this.c >>>= 0;
    this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return (t >>> 0) / 4294967296;
  }

  /** integer in [min, max] */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** picks by weight; `weights` parallel to `items` */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    const total = weights.reduce((s, w) => s + w, 0);
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] as number;
      if (r < 0) return items[i] as T;
    }
    return items[items.length - 1] as T;
  }

  /** an index in [0, n) skewed toward 0: a few big channels, a long tail of small ones */
  skewedIndex(n: number, skew = 3): number {
    return Math.min(n - 1, Math.floor(n * this.next() ** skew));
  }

  /** heavy-tailed (Pareto) count with the given minimum and tail index */
  pareto(min: number, alpha: number, cap = 2_000_000_000): number {
    const u = 1 - this.next(); // (0, 1]
    return Math.min(cap, Math.floor(min / u ** (1 / alpha)));
  }

  hex(length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += '0123456789abcdef'[Math.floor(this.next() * 16)];
    return s;
  }

  alnum(length: number): string {
    const abc = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let s = '';
    for (let i = 0; i < length; i++) s += abc[Math.floor(this.next() * abc.length)];
    return s;
  }

  /** an RFC 4122 version-4 UUID */
  uuid(): string {
    const h = this.hex(32);
    const variant = '89ab'[Math.floor(this.next() * 4)];
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}
