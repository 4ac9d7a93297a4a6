/**
 * How many consumers one contributions file may declare (`sync.maxConsumers`, and a provider's
 * own `maxConsumers`, which wins): declared once here. A file declaring more is refused whole,
 * by its count, before its entries are read (`src/desired/load-contributions.ts`).
 */
import { z } from 'zod';

/** `sync.maxConsumers` when not given: the fleet one provider is built for. */
export const DEFAULT_MAX_CONSUMERS = 100_000;

export const maxConsumersSchema = z.int().min(1, 'must be at least 1').max(10_000_000, 'must be at most 10,000,000');
