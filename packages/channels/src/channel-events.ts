import type { AnswerListener, ChannelAnswer, ChannelRefusal, RefusalListener } from './types.js';

/** Answer and refusal subscriptions shared by every channel. */
export class ChannelEvents {
  readonly #answerListeners = new Set<AnswerListener>();
  readonly #refusalListeners = new Set<RefusalListener>();

  /** Subscribes to answers; returns the unsubscribe function. */
  onAnswer(listener: AnswerListener): () => void {
    this.#answerListeners.add(listener);
    return () => this.#answerListeners.delete(listener);
  }

  /** Subscribes to refused inputs; returns the unsubscribe function. */
  onRefusal(listener: RefusalListener): () => void {
    this.#refusalListeners.add(listener);
    return () => this.#refusalListeners.delete(listener);
  }

  protected emitAnswer(answer: ChannelAnswer): void {
    // A listener's failure must not stop a channel's receive loop, nor keep other listeners from hearing the answer.
    for (const listener of [...this.#answerListeners]) {
      try {
        listener(answer);
      } catch {
        /* listener errors are the listener's to report */
      }
    }
  }

  protected emitRefusal(refusal: ChannelRefusal): void {
    for (const listener of [...this.#refusalListeners]) {
      try {
        listener(refusal);
      } catch {
        /* listener errors are the listener's to report */
      }
    }
  }
}
