/** The operator commands of the `idempotent-event-flow` program, by name: what the operator package's bin runs. */
import { blockedCommand } from './blocked-command';
import type { Command } from './command';
import { dlqCommand } from './dlq-command';
import { fenceCommand } from './fence-command';
import { inboxCommand } from './inbox-command';
import { outboxCommand } from './outbox-command';
import { replayCommand } from './replay-command';

/** The operator commands, by name. */
export const OPERATOR_COMMANDS: ReadonlyMap<string, Command> = new Map([blockedCommand, dlqCommand, fenceCommand, inboxCommand, outboxCommand, replayCommand].map((command) => [command.name, command]));
