"""Small generated data sets for training sequence models: seeded, instant, nothing to download.

`first_sign(num_sequences, seq_len, noise, seed)` makes a task that needs memory: the label is
the sign of a sequence's first value, and every later value is noise. A model that looks only
at the last step, or at any single late step, can do no better than a coin toss.
Introduced in notebooks/09_sequence_model.ipynb.

`quotes(num_texts, min_words, max_words, seed)` makes short texts with quoted passages and a
tag per character: 1 inside a quotation (the quote marks included), 0 outside. Whether a
character is quoted depends on how many quote marks came before it, so a tagger that reads one
character at a time without memory cannot tell. Introduced in notebooks/13_text_to_predictions.ipynb.
"""

import math
import numbers

import torch

from helpers._validate import student_facing


@student_facing
def first_sign(num_sequences, seq_len, noise=0.5, seed=0):
    """Sequences that start with +1 or -1 and continue with noise; the label says which: (N, T, 1), (N,).

    Step 0 holds the signal, +1 (label 1) or -1 (label 0), each with probability 1/2; steps 1 to
    seq_len - 1 hold Gaussian noise with standard deviation `noise`, unrelated to the label.
    Returns `inputs` (num_sequences, seq_len, 1) float32, batch first, and `labels`
    (num_sequences,) int64, ready for nn.CrossEntropyLoss. The same seed gives the same data.
    """
    _check_count("num_sequences", num_sequences, "the number of sequences to make")
    _check_count("seq_len", seq_len, "the number of time steps per sequence")
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real):
        raise TypeError(f"noise is the standard deviation of the later steps, a number like 0.5; got {noise!r}.")
    if not math.isfinite(noise) or noise < 0:
        raise ValueError(
            f"noise is the standard deviation of the later steps, so it must be 0 or more (and finite); got {noise}."
        )
    _check_seed(seed)
    generator = torch.Generator().manual_seed(int(seed))
    labels = torch.randint(0, 2, (num_sequences,), generator=generator)  # (N,) int64: 1 for +1, 0 for -1
    inputs = noise * torch.randn(num_sequences, seq_len, 1, generator=generator)  # (N, T, 1)
    inputs[:, 0, 0] = 2.0 * labels - 1.0  # the signal at step 0: +1 or -1
    return inputs, labels


# The words of quotes(): short, common, and all in lower case, so the characters are few.
WORDS = (
    "a", "and", "cat", "dog", "go", "he", "it", "mat", "no", "on",
    "ran", "said", "sat", "says", "she", "so", "the", "to", "we", "yes",
)  # fmt: skip
QUOTE = '"'


@student_facing
def quotes(num_texts, min_words=4, max_words=10, seed=0):
    """Texts of `min_words` to `max_words` words with 0, 1 or 2 quoted passages; a tag per character.

    Each text is words from WORDS joined by spaces; a quoted passage is one or more whole words
    between two quote marks, e.g. `he said "no so" and ran`. A character's tag is 1 if it is a
    quote mark or an odd number of quote marks come before it (inside a quotation), else 0.
    Returns `texts` (a list of num_texts str) and `tags` (a list of lists of 0 and 1, one per
    character of each text). The same seed gives the same texts.
    """
    _check_count("num_texts", num_texts, "the number of texts to make")
    _check_count("min_words", min_words, "the fewest words in a text")
    _check_count("max_words", max_words, "the most words in a text")
    if max_words < min_words:
        raise ValueError(f"max_words must be at least min_words; got min_words={min_words}, max_words={max_words}.")
    _check_seed(seed)
    generator = torch.Generator().manual_seed(int(seed))
    texts, tags = [], []
    for _ in range(num_texts):
        count = int(torch.randint(min_words, max_words + 1, (1,), generator=generator))
        words = [WORDS[i] for i in torch.randint(len(WORDS), (count,), generator=generator).tolist()]
        passages = min(int(torch.randint(0, 3, (1,), generator=generator)), count)
        # 2 * passages distinct word boundaries: each pair opens before a word and closes after one.
        bounds = sorted(torch.randperm(count + 1, generator=generator)[: 2 * passages].tolist())
        for start, end in zip(bounds[0::2], bounds[1::2]):
            words[start] = QUOTE + words[start]
            words[end - 1] = words[end - 1] + QUOTE
        text = " ".join(words)
        texts.append(text)
        tags.append(_inside_quotes(text))
    return texts, tags


def _inside_quotes(text):
    """1 for each character that is a quote mark or follows an odd number of them, else 0."""
    tags, inside = [], False
    for character in text:
        if character == QUOTE:
            tags.append(1)
            inside = not inside
        else:
            tags.append(int(inside))
    return tags


def _check_seed(seed):
    """Raise unless `seed` is an int (a bool is not)."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int, e.g. seed=0; got {seed!r}.")


def _check_count(name, value, meaning):
    """Raise unless `value` is a whole number of at least 1."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} is {meaning}, a whole number like 100; got {value!r}.")
    if value < 1:
        raise ValueError(f"{name} is {meaning}, so it must be at least 1; got {value}.")


__all__ = ["first_sign", "quotes"]
