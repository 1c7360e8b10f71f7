"""Exercises of notebooks/13_text_to_predictions.ipynb."""

import re

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from helpers.data import quotes
from helpers.exercise_types import CodeExercise, CodeMistake, Exercise, Mistake


def _vocabulary():
    """The notebook's vocabulary: the padding token, then every character of its 400 training texts."""
    texts, _ = quotes(400, seed=0)
    return ["<pad>", *sorted(set("".join(texts)))]


def _embedding_parameters():
    """The parameters of the tagger's nn.Embedding: one row of embedding_dim=8 numbers per vocabulary entry."""
    embedding = nn.Embedding(len(_vocabulary()), 8, padding_idx=0)
    return sum(p.numel() for p in embedding.parameters())


def _expected_batch():
    """The batch size torch expects in its message when (16, 50, 8) batch-first data meets a seq-first GRU."""
    gru = nn.GRU(input_size=8, hidden_size=32, num_layers=2)  # no batch_first: it reads (seq_len, batch, features)
    x = torch.zeros(16, 50, 8)  # (batch=16, seq_len=50, features=8), batch first
    try:
        gru(x, torch.zeros(2, 16, 32))
    except RuntimeError as error:  # "Expected hidden size (2, 50, 32), got [2, 16, 32]"
        return int(re.search(r"Expected hidden size \(\d+, (\d+), \d+\)", str(error)).group(1))
    raise AssertionError("torch accepted an h_0 whose batch disagrees with the input's")


def _scores_shape(total_length=48):
    """The per-character scores' shape for 4 texts of lengths 37, 20, 12, 5 with pad_packed_sequence(total_length=...)."""
    lengths = torch.tensor([37, 20, 12, 5])
    lstm = nn.LSTM(8, 6, batch_first=True)
    head = nn.Linear(6, 2)
    packed = pack_padded_sequence(torch.zeros(4, 37, 8), lengths, batch_first=True)
    with torch.no_grad():
        output, _ = pad_packed_sequence(lstm(packed)[0], batch_first=True, total_length=total_length)
        return tuple(head(output).shape)


def tag_loss(scores, tags, lengths):
    """The mean cross-entropy over every real character of the batch: padding left out."""
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]  # (B, T): True where step t is inside text b
    return nn.functional.cross_entropy(scores[is_real], tags[is_real])  # (n, C) scores vs (n,) tags


def _real_loss(scores, tags, lengths, kind):
    """The loss over the real characters, computed a wrong way `kind`: softmax first, nll on scores, log_softmax
    over the steps or the batch instead of the classes, or a sum."""
    is_real = torch.arange(scores.shape[1]) < lengths[:, None]  # (B, T)
    real_scores, real_tags = scores[is_real], tags[is_real]  # (n, C), (n,)
    if kind == "softmax_first":
        return nn.functional.cross_entropy(real_scores.softmax(dim=-1), real_tags)
    if kind == "nll_on_scores":
        return nn.functional.nll_loss(real_scores, real_tags)
    if kind in ("log_softmax_over_time", "log_softmax_over_batch"):
        dim = 1 if kind == "log_softmax_over_time" else 0
        return nn.functional.nll_loss(scores.log_softmax(dim=dim)[is_real], real_tags)
    return nn.functional.cross_entropy(real_scores, real_tags, reduction="sum")


def _tag_loss_variant(kind):
    """A wrong tag_loss written as a student would: softmax without the log, or the sum over every position."""

    def loss(scores, tags, lengths):
        is_real = torch.arange(scores.shape[1]) < lengths[:, None]  # (B, T)
        if kind == "softmax_no_log":
            return nn.functional.nll_loss(scores[is_real].softmax(dim=-1), tags[is_real])
        each = nn.functional.cross_entropy(scores.transpose(1, 2), tags, reduction="none")  # (B, T)
        return (each * is_real).sum() / is_real.numel()

    return loss


def _case(generator, lengths, num_classes=2, tags=None):
    """Scores (B, T, C), tags (B, T) with 0 in the padding, as a data set might give them, and lengths (B,)."""
    lengths = torch.tensor(lengths)
    B, T = len(lengths), int(lengths.max())
    scores = torch.randn(B, T, num_classes, generator=generator)
    if tags is None:
        tags = torch.randint(num_classes, (B, T), generator=generator)
    is_padding = torch.arange(T) >= lengths[:, None]
    return scores, tags.masked_fill(is_padding, 0), lengths


def _notebook_tags():
    """The notebook's batch: the tags of its first 4 training texts, padded with 0 to the longest (B=4, T=34)."""
    _, tags = quotes(4, seed=0)
    T = max(len(text_tags) for text_tags in tags)
    return torch.tensor([text_tags + [0] * (T - len(text_tags)) for text_tags in tags])


def _tag_loss_cases():
    """The notebook's batch, then other sizes, 3 tags, lengths in any order, and a batch with no padding."""
    generator = torch.Generator().manual_seed(13)
    return [
        (
            "the notebook's batch: scores (4, 34, 2), lengths (29, 34, 27, 27)",
            _case(generator, [29, 34, 27, 27], tags=_notebook_tags()),
        ),
        ("scores (3, 7, 3), lengths (2, 7, 5)", _case(generator, [2, 7, 5], num_classes=3)),
        ("scores (5, 4, 2), lengths (1, 4, 3, 4, 2)", _case(generator, [1, 4, 3, 4, 2])),
        ("scores (2, 6, 4), lengths (6, 6): no padding", _case(generator, [6, 6], num_classes=4)),
    ]


def _mean_of_text_means(scores, tags, lengths):
    """Each text's mean loss, then the mean over texts: short texts weigh as much as long ones."""
    means = [nn.functional.cross_entropy(scores[b, :n], tags[b, :n]) for b, n in enumerate(lengths.tolist())]
    return torch.stack(means).mean()


EXERCISES = [
    CodeExercise(
        key="13.tag_loss",
        question="tag_loss(scores, tags, lengths): the mean cross-entropy over the real characters of a padded batch",
        reference=tag_loss,
        explanation=(
            "torch.arange(T) < lengths[:, None] broadcasts a (T,) row against a (B, 1) column into a (B, T) mask, "
            "True at step t of text b when t < lengths[b]. Indexing scores (B, T, C) and tags (B, T) with it keeps "
            "the real characters of every text, n of them, as (n, C) and (n,); cross_entropy's mean is then over "
            "those n characters, which is what nn.CrossEntropyLoss() gives with the padding's tags set to -100."
        ),
        cases=_tag_loss_cases,
        returns="the loss, a tensor of one number",
        mistakes=(
            CodeMistake(
                "the mask built from the tags (tags != 0): a real character whose tag is 0 is dropped too",
                "build the mask from the lengths: torch.arange(T) < lengths[:, None]",
                lambda scores, tags, lengths: nn.functional.cross_entropy(scores[tags != 0], tags[tags != 0]),
            ),
            CodeMistake(
                "softmax without the log: nll_loss expects log-probabilities (cross_entropy takes the scores as they are)",
                "nn.functional.cross_entropy(scores[is_real], tags[is_real]), or log_softmax before nll_loss",
                _tag_loss_variant("softmax_no_log"),
            ),
            CodeMistake(
                "the padding's losses zeroed but the sum divided by every position, padding included (B * T)",
                "divide by the number of real characters, lengths.sum(), or take the mean over scores[is_real]",
                _tag_loss_variant("divided_by_all"),
            ),
            CodeMistake(
                "the padding is counted: its tags (0 here) are treated as real characters",
                "keep only the real steps, is_real = torch.arange(T) < lengths[:, None], and take the loss of "
                "scores[is_real] against tags[is_real]",
                lambda scores, tags, lengths: nn.functional.cross_entropy(scores.flatten(0, 1), tags.flatten()),
            ),
            CodeMistake(
                "a mean of each text's mean: a short text weighs as much as a long one",
                "average over characters, not texts: one cross_entropy over all real characters of the batch",
                _mean_of_text_means,
            ),
            CodeMistake(
                "one step too many: torch.arange(T) <= lengths[:, None] keeps the first padding step too",
                "a text of length n has steps 0 to n - 1: use < lengths[:, None]",
                lambda scores, tags, lengths: tag_loss(scores, tags, lengths + 1),
            ),
            CodeMistake(
                "softmax applied before cross_entropy: cross_entropy applies log_softmax itself, so the scores are "
                "squashed twice and the loss can never reach 0",
                "give cross_entropy the raw scores (logits): nn.functional.cross_entropy(scores[is_real], tags[is_real])",
                lambda scores, tags, lengths: _real_loss(scores, tags, lengths, "softmax_first"),
            ),
            CodeMistake(
                "nll_loss on the raw scores: it expects log-probabilities, so the log_softmax is missing",
                "nn.functional.cross_entropy(scores[is_real], tags[is_real]), which is log_softmax then nll_loss",
                lambda scores, tags, lengths: _real_loss(scores, tags, lengths, "nll_on_scores"),
            ),
            CodeMistake(
                "log_softmax taken over dim=1, the time steps, instead of the classes: each class's scores are "
                "normalised across the characters of a text",
                "normalise over the classes, the last dimension: scores.log_softmax(dim=-1) (cross_entropy does it "
                "for you)",
                lambda scores, tags, lengths: _real_loss(scores, tags, lengths, "log_softmax_over_time"),
            ),
            CodeMistake(
                "log_softmax taken over dim=0, the batch, instead of the classes: each class's scores are normalised "
                "across the texts",
                "normalise over the classes, the last dimension: scores.log_softmax(dim=-1) (cross_entropy does it "
                "for you)",
                lambda scores, tags, lengths: _real_loss(scores, tags, lengths, "log_softmax_over_batch"),
            ),
            CodeMistake(
                "one step too few: torch.arange(T) < lengths[:, None] - 1 leaves out each text's last character",
                "a text of length n has steps 0 to n - 1, all real: use < lengths[:, None]",
                lambda scores, tags, lengths: tag_loss(scores, tags, lengths - 1),
            ),
            CodeMistake(
                "the real characters' losses summed and divided by the batch size, not by their number",
                "divide by the number of real characters, lengths.sum(), or take the mean over scores[is_real]",
                lambda scores, tags, lengths: _real_loss(scores, tags, lengths, "sum") / len(lengths),
            ),
            CodeMistake(
                "a sum, not a mean",
                "cross_entropy averages by default (reduction='mean'); or divide your sum by the number of real "
                "characters, lengths.sum()",
                lambda scores, tags, lengths: tag_loss(scores, tags, lengths) * lengths.sum(),
            ),
        ),
    ),
    Exercise(
        key="13.embedding_parameters",
        question="the number of parameters of the tagger's nn.Embedding(len(vocab), 8, padding_idx=0)",
        solution=_embedding_parameters,
        explanation=(
            "The weight has one row of embedding_dim = 8 numbers per vocabulary entry: 18 entries (the padding "
            "token and 17 characters) give 18 x 8 = 144. padding_idx's row is a parameter too; it is only never "
            "changed by its gradient, which is always zero."
        ),
        mistakes=(
            Mistake(
                lambda: 17 * 8,
                "That leaves out the padding token's row. It is part of the weight and counted by numel(); "
                "padding_idx only keeps its gradient at zero.",
            ),
            Mistake(lambda: 18, "That is the number of rows, one per vocabulary entry; each row holds 8 numbers."),
            Mistake(lambda: 8, "That is one row, embedding_dim; the weight has one row per vocabulary entry."),
        ),
    ),
    Exercise(
        key="13.expected_batch",
        question="the middle number of 'Expected hidden size (2, ?, 32)' for (16, 50, 8) batch-first data and a "
        "seq-first nn.GRU(8, 32, num_layers=2) given h_0 (2, 16, 32)",
        solution=_expected_batch,
        explanation=(
            "Without batch_first, the GRU reads its input as (seq_len, batch, features): dimension 1 is the batch, "
            "so it takes 50 for the batch size and expects h_0 of shape (2, 50, 32). A number there that is your "
            "seq_len says the input's first two dimensions were read the other way round."
        ),
        mistakes=(
            Mistake(
                lambda: 16,
                "16 is your batch size, and torch would expect it if it read the input your way. Without "
                "batch_first it reads dimension 1 of the input as the batch.",
            ),
            Mistake(
                lambda: 8, "8 is the number of features, input.size(-1); the batch size is read from another dimension."
            ),
            Mistake(lambda: 2, "2 is the first number, num_layers x num_directions; the middle one is the batch size."),
        ),
    ),
    Exercise(
        key="13.scores_shape",
        question="the shape of the per-character scores for 4 texts of lengths 37, 20, 12, 5, batch first, "
        "unpacked with total_length=48, and 2 tags",
        solution=_scores_shape,
        explanation=(
            "pad_packed_sequence(..., batch_first=True, total_length=48) pads output to (4, 48, H), whatever the "
            "longest text; the Linear head maps the last dimension to 2 scores: (4, 48, 2), the same (B, T) as "
            "tags padded to 48."
        ),
        mistakes=(
            Mistake(
                lambda: _scores_shape(total_length=None),
                "That is the shape without total_length: the longest text of the batch, 37 steps. total_length=48 "
                "pads to 48.",
            ),
            Mistake(lambda: (48, 4, 2), "Time first: the data and output here are batch first, (batch, steps, ...)."),
        ),
    ),
]
