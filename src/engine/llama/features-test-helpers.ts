import { open } from "node:fs/promises";
import { readGgufFileInfo } from "node-llama-cpp";

/**
 * For the proofs that readFeatures returns the answer position's final hidden state h: the
 * logit of token t is row t of the LM head times h, so rows read from the GGUF file, times
 * the vector, must give the readout's logits. ggml runs a Q8_0 matrix product on activations
 * quantised to Q8_0 too (blocks of 32, scale max|x|/127 stored as f16), so `dotQ8` does the same.
 */
export interface TensorRows {
  type: "F32" | "Q8_0";
  /** Values per row (the embedding length for an LM head). */
  width: number;
  /** Row `index`, dequantised; with its per-block scales and integers for Q8_0. */
  row(index: number): Promise<{ values: Float32Array; q8?: { scales: Float32Array; quants: Int8Array } }>;
}

const F32 = 0;
const Q8_0 = 8;

export async function tensorRows(file: string, name: string): Promise<TensorRows> {
  const info = await readGgufFileInfo(file);
  const tensor = info.fullTensorInfo?.find((t) => t.name === name);
  if (!tensor || info.infoEndOffset === undefined) throw new Error(`${file} has no tensor ${name}`);
  const alignment = Number((info.metadata.general as { alignment?: number }).alignment ?? 32);
  const dataStart = Math.ceil(info.infoEndOffset / alignment) * alignment;
  const width = Number(tensor.dimensions[0]);
  const type = tensor.ggmlType as number;
  if (type !== F32 && type !== Q8_0) throw new Error(`${name} is ggml type ${type}; only F32 and Q8_0 are read here`);
  const rowBytes = type === F32 ? width * 4 : (width / 32) * 34;
  return {
    type: type === F32 ? "F32" : "Q8_0",
    width,
    async row(index) {
      const handle = await open(file, "r");
      try {
        const bytes = Buffer.alloc(rowBytes);
        await handle.read(bytes, 0, rowBytes, dataStart + Number(tensor.offset) + index * rowBytes);
        if (type === F32) return { values: new Float32Array(bytes.buffer, bytes.byteOffset, width).slice() };
        const scales = new Float32Array(width / 32);
        const quants = new Int8Array(width);
        const values = new Float32Array(width);
        for (let block = 0; block < width / 32; block++) {
          scales[block] = halfToFloat(bytes.readUInt16LE(block * 34));
          for (let i = 0; i < 32; i++) {
            quants[block * 32 + i] = bytes.readInt8(block * 34 + 2 + i);
            values[block * 32 + i] = scales[block] * quants[block * 32 + i];
          }
        }
        return { values, q8: { scales, quants } };
      } finally {
        await handle.close();
      }
    },
  };
}

/** Σ w·h in float64. */
export function dot(w: Float32Array, h: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < w.length; i++) sum += w[i] * h[i];
  return sum;
}

/** ggml's Q8_0 · Q8_0 product: h quantised per block of 32 as quantize_row_q8_0 does, integer sums scaled per block. */
export function dotQ8(w: { scales: Float32Array; quants: Int8Array }, h: Float32Array): number {
  let sum = 0;
  for (let block = 0; block < w.scales.length; block++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(h[block * 32 + i]));
    const d = Math.fround(amax / 127);
    const inverse = d === 0 ? 0 : Math.fround(1 / d);
    let integers = 0;
    for (let i = 0; i < 32; i++) integers += w.quants[block * 32 + i] * Math.round(Math.fround(h[block * 32 + i] * inverse));
    sum += integers * w.scales[block] * halfToFloat(floatToHalf(d));
  }
  return sum;
}

/** Values less their mean: the readout's first-step values carry a constant shared by a question's labels. */
export const centred = (values: number[]): number[] => {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return values.map((v) => v - mean);
};

function halfToFloat(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >> 10) & 0x1f;
  const fraction = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 31) return fraction ? Number.NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

/** Round to nearest even, as ggml's GGML_FP32_TO_FP16 (F16C or its software form) does for normal values. */
function floatToHalf(value: number): number {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  const f = view.getUint32(0);
  const sign = (f >>> 16) & 0x8000;
  const exponent = ((f >>> 23) & 0xff) - 127 + 15;
  if (exponent <= 0 || exponent >= 31) throw new Error(`scale ${value} is outside the normal f16 range`);
  let mantissa = f & 0x7fffff;
  let half = sign | (exponent << 10) | (mantissa >>> 13);
  mantissa &= 0x1fff;
  if (mantissa > 0x1000 || (mantissa === 0x1000 && half & 1)) half++;
  return half;
}
