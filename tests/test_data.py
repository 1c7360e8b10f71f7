"""helpers.data: small seeded data sets whose labels follow a stated rule."""

import re

import pytest
import torch

from helpers import data


def test_the_same_seed_gives_the_same_data():
    """Two calls with one seed return identical inputs and labels."""
    first, second = data.first_sign(50, 10, seed=3), data.first_sign(50, 10, seed=3)
    assert torch.equal(first[0], second[0]) and torch.equal(first[1], second[1])


def test_different_seeds_give_different_data():
    """Another seed draws other signs and other noise."""
    (inputs_a, labels_a), (inputs_b, labels_b) = data.first_sign(50, 10, seed=0), data.first_sign(50, 10, seed=1)
    assert not torch.equal(inputs_a, inputs_b) and not torch.equal(labels_a, labels_b)


def test_the_global_random_state_is_left_alone():
    """Drawing data does not change what torch.manual_seed makes torch.randn return next."""
    torch.manual_seed(0)
    expected = torch.randn(3)
    torch.manual_seed(0)
    data.first_sign(20, 5, seed=7)
    assert torch.equal(torch.randn(3), expected)


@pytest.mark.parametrize("num_sequences, seq_len", [(1, 1), (4, 20), (33, 7)])
def test_shapes_and_dtypes_are_ready_for_a_batch_first_rnn(num_sequences, seq_len):
    """inputs (N, T, 1) float32 and labels (N,) int64, as nn.RNN(batch_first=True) and CrossEntropyLoss expect."""
    inputs, labels = data.first_sign(num_sequences, seq_len)
    assert inputs.shape == (num_sequences, seq_len, 1) and inputs.dtype == torch.float32
    assert labels.shape == (num_sequences,) and labels.dtype == torch.int64


def test_the_label_is_the_sign_of_the_first_step():
    """Step 0 is +1 exactly when the label is 1, and -1 exactly when it is 0."""
    inputs, labels = data.first_sign(200, 12, seed=5)
    assert torch.equal(inputs[:, 0, 0], 2.0 * labels - 1.0)
    assert set(labels.tolist()) == {0, 1}


def test_later_steps_are_noise_of_the_requested_size_and_unrelated_to_the_label():
    """Steps 1.. have standard deviation `noise`, and the same spread and mean for both labels."""
    inputs, labels = data.first_sign(4000, 11, noise=0.5, seed=0)
    later = inputs[:, 1:, 0]  # (N, T - 1)
    assert abs(later.std().item() - 0.5) < 0.02
    mean_positive, mean_negative = later[labels == 1].mean().item(), later[labels == 0].mean().item()
    assert abs(mean_positive - mean_negative) < 0.02


def test_zero_noise_leaves_only_the_signal():
    """With noise=0 every step after the first is exactly 0."""
    inputs, _ = data.first_sign(10, 6, noise=0.0)
    assert torch.count_nonzero(inputs[:, 1:]) == 0


def test_classes_are_roughly_balanced():
    """About half the labels are 1."""
    _, labels = data.first_sign(10_000, 2, seed=11)
    assert 0.48 < labels.float().mean().item() < 0.52


@pytest.mark.parametrize(
    "arguments, exception, message",
    [
        ({"num_sequences": 0}, ValueError, "num_sequences is the number of sequences to make, so it must be at"),
        ({"num_sequences": 2.5}, TypeError, "num_sequences is the number of sequences to make, a whole number"),
        (
            {"seq_len": -3},
            ValueError,
            "seq_len is the number of time steps per sequence, so it must be at least 1; got -3",
        ),
        ({"seq_len": True}, TypeError, "seq_len is the number of time steps per sequence, a whole number like 100"),
        ({"noise": -0.1}, ValueError, "noise is the standard deviation of the later steps, so it must be 0 or more"),
        ({"noise": float("nan")}, ValueError, "it must be 0 or more (and finite); got nan"),
        ({"noise": "0.5"}, TypeError, "noise is the standard deviation of the later steps, a number like 0.5"),
        ({"seed": 1.5}, TypeError, "seed must be an int, e.g. seed=0; got 1.5"),
    ],
)
def test_bad_arguments_are_explained(arguments, exception, message):
    """Each bad argument raises an error that names it, says what it means and what was given."""
    chosen = {"num_sequences": 4, "seq_len": 5} | arguments
    with pytest.raises(exception, match=re.escape(message)):
        data.first_sign(**chosen)


def test_quotes_gives_the_same_texts_for_the_same_seed_and_others_for_another():
    """One seed, one set of texts and tags; another seed, other texts."""
    assert data.quotes(30, seed=4) == data.quotes(30, seed=4)
    assert data.quotes(30, seed=4)[0] != data.quotes(30, seed=5)[0]


def test_quotes_are_words_with_whole_quoted_passages_and_a_tag_per_character():
    """Texts of min_words..max_words words; quote marks in pairs around whole words; one tag per character."""
    texts, tags = data.quotes(500, min_words=2, max_words=7, seed=1)
    counts = {text.count(data.QUOTE) for text in texts}
    assert counts == {0, 2, 4}  # 0, 1 or 2 passages, each opened and closed
    for text, text_tags in zip(texts, tags, strict=True):
        words = text.split(" ")
        assert 2 <= len(words) <= 7
        assert all(word.strip(data.QUOTE) in data.WORDS for word in words)
        assert len(text_tags) == len(text) and set(text_tags) <= {0, 1}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_quote_tag_is_one_exactly_from_an_opening_mark_to_its_closing_mark(seed):
    """Tag 1 on each quote mark and on every character between an opening mark and its closing one."""
    texts, tags = data.quotes(200, seed=seed)
    for text, text_tags in zip(texts, tags, strict=True):
        marks = [i for i, character in enumerate(text) if character == data.QUOTE]
        inside = set()
        for start, end in zip(marks[0::2], marks[1::2], strict=True):
            inside |= set(range(start, end + 1))
        assert text_tags == [int(i in inside) for i in range(len(text))]


def test_quotes_needs_memory_a_letter_alone_does_not_decide_its_tag():
    """Every letter occurs both inside and outside a quotation: no per-character rule gets every tag right."""
    texts, tags = data.quotes(400, seed=0)
    seen = {}
    for text, text_tags in zip(texts, tags, strict=True):
        for character, tag in zip(text, text_tags, strict=True):
            seen.setdefault(character, set()).add(tag)
    assert seen.pop(data.QUOTE) == {1}
    assert all(found == {0, 1} for found in seen.values())


def test_drawing_quotes_leaves_the_global_random_state_alone():
    """quotes uses its own generator: torch.randn returns what the seed says afterwards."""
    torch.manual_seed(0)
    expected = torch.randn(3)
    torch.manual_seed(0)
    data.quotes(20, seed=7)
    assert torch.equal(torch.randn(3), expected)


@pytest.mark.parametrize(
    "arguments, exception, message",
    [
        ({"num_texts": 0}, ValueError, "num_texts is the number of texts to make, so it must be at least 1; got 0"),
        ({"min_words": 2.0}, TypeError, "min_words is the fewest words in a text, a whole number"),
        ({"min_words": 5, "max_words": 3}, ValueError, "max_words must be at least min_words; got min_words=5"),
        ({"seed": "0"}, TypeError, "seed must be an int, e.g. seed=0; got '0'"),
    ],
)
def test_quotes_explains_bad_arguments(arguments, exception, message):
    """Each bad argument raises an error that names it and what was given."""
    chosen = {"num_texts": 3} | arguments
    with pytest.raises(exception, match=re.escape(message)):
        data.quotes(**chosen)
