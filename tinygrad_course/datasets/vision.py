"""`VisionDataset`: what the image datasets share (like torchvision's base class)."""
from __future__ import annotations

from ..utils.data.dataset import Dataset


class VisionDataset(Dataset):
    """An (image, label) dataset that applies `self.transform` / `self.target_transform` on access.

    Subclasses set those two attributes and implement `_raw_item(index)`.
    """

    transform = None
    target_transform = None

    def _raw_item(self, index):
        raise NotImplementedError

    def __getitem__(self, index):
        img, target = self._raw_item(index)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target
