// SPDX-License-Identifier: MIT
pragma solidity 0.8.28;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {MerkleProof} from "@openzeppelin/contracts/utils/cryptography/MerkleProof.sol";

/// @dev What the distributor needs from a fund vault: who may post its rounds, and whether its
///      claims module is paused.
interface IDividendFund {
    function owner() external view returns (address);

    function isPaused(uint8 module) external view returns (bool);
}

/// @title DividendDistributor
/// @notice Holds the holders' share of each fund's profit (deposited by the vault at settlement)
///         and pays it out in rounds. A round (fund, epoch) commits to a Merkle root over
///         OpenZeppelin StandardMerkleTree leaves [address account, uint256 amount]; the full
///         distribution is published at the round's uri. Each leaf can be claimed once.
contract DividendDistributor {
    using SafeERC20 for IERC20;

    struct Round {
        bytes32 merkleRoot;
        uint256 total;
        uint256 claimed;
        uint32 leafCount;
        string uri;
    }

    uint8 private constant MODULE_CLAIMS = 2;

    event DividendRoundPosted(
        address indexed fund,
        uint64 indexed epoch,
        bytes32 merkleRoot,
        uint256 total,
        uint32 leafCount,
        string uri
    );
    event DividendClaimed(address indexed fund, uint64 indexed epoch, address indexed account, uint256 amount);

    error NotFundOwner(address fund, address caller);
    error RoundExists(address fund, uint64 epoch);
    error UnknownRound(address fund, uint64 epoch);
    error InvalidRound();
    error InsufficientFunds(uint256 available, uint256 total);
    error ClaimsPaused(address fund);
    error AlreadyClaimed(address fund, uint64 epoch, address account);
    error InvalidProof();

    IERC20 public immutable asset;

    /// @notice Deposited for a fund and not yet committed to a round.
    mapping(address fund => uint256) public unallocated;
    mapping(address fund => mapping(uint64 epoch => Round)) private _rounds;
    mapping(address fund => mapping(uint64 epoch => mapping(address account => bool))) private _claimed;

    constructor(IERC20 asset_) {
        asset = asset_;
    }

    /// @notice Adds `amount` of the base asset to `fund`'s unallocated dividends.
    function deposit(address fund, uint256 amount) external {
        asset.safeTransferFrom(msg.sender, address(this), amount);
        unallocated[fund] += amount;
    }

    /// @notice Commits `total` of the fund's unallocated dividends to a round. Only the fund's owner.
    function postRound(
        address fund,
        uint64 epoch,
        bytes32 merkleRoot,
        uint256 total,
        uint32 leafCount,
        string calldata uri
    ) external {
        if (IDividendFund(fund).owner() != msg.sender) revert NotFundOwner(fund, msg.sender);
        if (_rounds[fund][epoch].merkleRoot != bytes32(0)) revert RoundExists(fund, epoch);
        if (merkleRoot == bytes32(0) || leafCount == 0) revert InvalidRound();
        if (total > unallocated[fund]) revert InsufficientFunds(unallocated[fund], total);
        unallocated[fund] -= total;
        _rounds[fund][epoch] = Round(merkleRoot, total, 0, leafCount, uri);
        emit DividendRoundPosted(fund, epoch, merkleRoot, total, leafCount, uri);
    }

    /// @notice Pays `amount` to `account` if (account, amount) is a leaf of the round. Anyone may
    ///         submit the claim; the payment always goes to `account`.
    function claim(address fund, uint64 epoch, address account, uint256 amount, bytes32[] calldata proof) external {
        if (IDividendFund(fund).isPaused(MODULE_CLAIMS)) revert ClaimsPaused(fund);
        Round storage r = _rounds[fund][epoch];
        if (r.merkleRoot == bytes32(0)) revert UnknownRound(fund, epoch);
        if (_claimed[fund][epoch][account]) revert AlreadyClaimed(fund, epoch, account);
        bytes32 leaf = keccak256(bytes.concat(keccak256(abi.encode(account, amount))));
        if (!MerkleProof.verifyCalldata(proof, r.merkleRoot, leaf)) revert InvalidProof();
        _claimed[fund][epoch][account] = true;
        r.claimed += amount;
        asset.safeTransfer(account, amount);
        emit DividendClaimed(fund, epoch, account, amount);
    }

    function isClaimed(address fund, uint64 epoch, address account) external view returns (bool) {
        return _claimed[fund][epoch][account];
    }

    function round(
        address fund,
        uint64 epoch
    ) external view returns (bytes32 merkleRoot, uint256 total, uint256 claimed, uint32 leafCount, string memory uri) {
        Round storage r = _rounds[fund][epoch];
        return (r.merkleRoot, r.total, r.claimed, r.leafCount, r.uri);
    }
}
