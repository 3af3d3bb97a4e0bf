/**
 * The stand-in's GPU catalog (`GET /v2/catalog/gpus`) and its stock. Prices are
 * illustrative list prices in USD per GPU-hour, in the shape RunPod publishes them
 * (per cloud), not a copy of RunPod's current price list.
 */

export type Cloud = 'SECURE' | 'COMMUNITY';

export interface GpuType {
  id: string;
  name: string;
  pool: string | null;
  manufacturer: 'NVIDIA' | 'AMD' | 'UNKNOWN';
  /** VRAM in GB. */
  memory: number;
  secure: boolean;
  community: boolean;
  price: { secure: number; community: number; serverless?: number };
  maxCount: { secure: number; community: number };
}

function gpu(
  id: string,
  name: string,
  memory: number,
  secure: number,
  community: number,
  opts: { manufacturer?: GpuType['manufacturer']; pool?: string | null; maxCount?: number } = {},
): GpuType {
  return {
    id,
    name,
    pool: opts.pool ?? null,
    manufacturer: opts.manufacturer ?? 'NVIDIA',
    memory,
    secure: secure > 0,
    community: community > 0,
    price: { secure, community },
    maxCount: {
      secure: secure > 0 ? (opts.maxCount ?? 8) : 0,
      community: community > 0 ? (opts.maxCount ?? 4) : 0,
    },
  };
}

export const DEFAULT_GPU_TYPES: readonly GpuType[] = [
  gpu('NVIDIA GeForce RTX 3070', 'RTX 3070', 8, 0, 0.13, { pool: 'AMPERE_16' }),
  gpu('NVIDIA RTX A4000', 'RTX A4000', 16, 0.25, 0.17, { pool: 'AMPERE_16' }),
  gpu('NVIDIA RTX A4500', 'RTX A4500', 20, 0.28, 0.19, { pool: 'AMPERE_24' }),
  gpu('NVIDIA RTX A5000', 'RTX A5000', 24, 0.29, 0.16, { pool: 'AMPERE_24' }),
  gpu('NVIDIA L4', 'L4', 24, 0.43, 0, { pool: 'ADA_24' }),
  gpu('NVIDIA GeForce RTX 4090', 'RTX 4090', 24, 0.69, 0.34, { pool: 'ADA_24' }),
  gpu('NVIDIA A40', 'A40', 48, 0.44, 0.35, { pool: 'AMPERE_48' }),
  gpu('NVIDIA RTX A6000', 'RTX A6000', 48, 0.49, 0.33, { pool: 'AMPERE_48' }),
  gpu('NVIDIA A100 80GB PCIe', 'A100 PCIe', 80, 1.64, 1.19, { pool: 'AMPERE_80' }),
  gpu('NVIDIA H100 80GB HBM3', 'H100 SXM', 80, 2.99, 2.69, { pool: 'HOPPER_80' }),
  gpu('AMD Instinct MI300X OAM', 'MI300X', 192, 2.49, 0, { manufacturer: 'AMD' }),
];

/** Free GPUs per type and cloud; creating a pod takes `gpu.count` of them, stopping returns them. */
export class Stock {
  private readonly free = new Map<string, number>();
  private readonly fallback: number;

  constructor(initial: Record<string, number> = {}, fallback = 8) {
    this.fallback = fallback;
    for (const [k, v] of Object.entries(initial)) this.free.set(k, v);
  }

  available(gpuId: string): number {
    return this.free.get(gpuId) ?? this.fallback;
  }

  set(gpuId: string, n: number): void {
    this.free.set(gpuId, n);
  }

  take(gpuId: string, n: number): boolean {
    const have = this.available(gpuId);
    if (have < n) return false;
    this.free.set(gpuId, have - n);
    return true;
  }

  give(gpuId: string, n: number): void {
    this.free.set(gpuId, this.available(gpuId) + n);
  }

  level(gpuId: string): 'NONE' | 'LOW' | 'MEDIUM' | 'HIGH' {
    const n = this.available(gpuId);
    return n <= 0 ? 'NONE' : n < 3 ? 'LOW' : n < 8 ? 'MEDIUM' : 'HIGH';
  }
}
