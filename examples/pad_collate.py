"""Batch variable-length sequences: pad them to the longest one and keep the lengths."""
import torch
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader


class Sentences(torch.utils.data.Dataset):
    """Each item is (token ids of varying length, label)."""

    def __init__(self):
        self.items = [
            (torch.tensor([5, 8, 2]), 0),
            (torch.tensor([7]), 1),
            (torch.tensor([3, 3, 9, 4, 1]), 1),
            (torch.tensor([6, 2]), 0),
        ]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def pad_collate(batch):
    """batch is a list of (sequence, label) pairs, one per sample."""
    sequences, labels = zip(*batch)
    lengths = torch.tensor([len(s) for s in sequences])
    padded = pad_sequence(list(sequences), batch_first=True, padding_value=0)
    return padded, lengths, torch.tensor(labels)


loader = DataLoader(Sentences(), batch_size=2, collate_fn=pad_collate)
for padded, lengths, labels in loader:
    print("padded:", padded.tolist())
    print("lengths:", lengths.tolist(), "labels:", labels.tolist())
    # A mask that is True on real tokens and False on padding.
    mask = torch.arange(padded.size(1)) < lengths.unsqueeze(1)
    print("mask:", mask.int().tolist())
