package dev.irisjvm.core;

/** The symmetric heap has no free block large enough for a request. */
public class IrisOutOfMemoryException extends IrisException {
    private final long requestedBytes;
    private final long freeBytes;
    private final long largestFreeBlock;

    public IrisOutOfMemoryException(String message, long requestedBytes, long freeBytes, long largestFreeBlock) {
        super(message);
        this.requestedBytes = requestedBytes;
        this.freeBytes = freeBytes;
        this.largestFreeBlock = largestFreeBlock;
    }

    public long requestedBytes() { return requestedBytes; }

    public long freeBytes() { return freeBytes; }

    public long largestFreeBlock() { return largestFreeBlock; }
}
