// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

/// @title Multicall3
/// @notice Batches read calls into one eth_call. Public networks carry Multicall3 at
///         0xcA11bde05977b3631167028862bE2a173976CA11; the devnet installs this contract's runtime
///         code at that same address so that viem's multicall works unchanged. Only the functions
///         clients use are implemented (aggregate3 and the block helpers).
contract Multicall3 {
    struct Call3 {
        address target;
        bool allowFailure;
        bytes callData;
    }

    struct Result {
        bool success;
        bytes returnData;
    }

    error CallFailed(uint256 index);

    function aggregate3(Call3[] calldata calls) external payable returns (Result[] memory results) {
        results = new Result[](calls.length);
        for (uint256 i = 0; i < calls.length; i++) {
            (bool success, bytes memory returnData) = calls[i].target.call(calls[i].callData);
            if (!success && !calls[i].allowFailure) revert CallFailed(i);
            results[i] = Result(success, returnData);
        }
    }

    function getBlockNumber() external view returns (uint256) {
        return block.number;
    }

    function getCurrentBlockTimestamp() external view returns (uint256) {
        return block.timestamp;
    }

    function getChainId() external view returns (uint256) {
        return block.chainid;
    }
}
